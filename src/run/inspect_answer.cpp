#include "src/run/inspect_answer.hpp"

#include "src/run/worker_protocol.hpp"
#include "util/json_reader.hpp"

namespace portcheck {
namespace {

using nlohmann::json;

// The readers below run on a value the schema has checked: a member they read is there, of its
// type, and optional only where the schema says so.
InspectedKernel read_kernel(const json& k) {
  InspectedKernel out;
  out.ok = k.at("ok").get<bool>();
  if (out.ok) {
    out.args = k.at("args").get<std::vector<std::string>>();
    out.constexprs = k.at("constexprs").get<std::vector<std::string>>();
  } else {
    out.failure = convert_checked_answer("cell_failure", k.at("failure"));
  }
  return out;
}

StaticPrediction read_prediction(const json& p) {
  return {p.at("stage").get<std::string>(), p.at("what").get<std::string>(),
          p.at("name").get<std::string>(), p.at("reason").get<std::string>()};
}

StaticFindings read_findings(const json& s) {
  StaticFindings out;
  for (const auto& [id, prediction] : s.at("cells").items())
    out.cells.emplace(
        id, prediction.is_null() ? std::nullopt : std::optional(read_prediction(prediction)));
  out.tables = StaticTables::from_checked(s.at("tables"));
  out.seconds = s.at("seconds").get<double>();
  return out;
}

json kernel_message(const InspectedKernel& k) {
  if (k.ok) return {{"ok", true}, {"args", k.args}, {"constexprs", k.constexprs}};
  return {{"ok", false}, {"failure", k.failure ? k.failure->message() : json::object()}};
}

json findings_message(const StaticFindings& s) {
  json cells = json::object();
  for (const auto& [id, prediction] : s.cells)
    cells[id] = prediction ? prediction->to_json() : json();
  return {{"cells", std::move(cells)}, {"tables", s.tables.message()}, {"seconds", s.seconds}};
}

}  // namespace

json StaticPrediction::to_json() const {
  return {{"stage", stage}, {"what", what}, {"name", name}, {"reason", reason}};
}

InspectAnswer InspectAnswer::read(const json& answer) {
  auto checked = try_read(answer);
  if (!checked.value)
    throw ProtocolError("protocol error: " + worker_breach("inspect_answer", checked.problem));
  return std::move(*checked.value);
}

Checked<InspectAnswer> InspectAnswer::try_read(const json& answer) {
  if (auto problem = protocol_problem("inspect_answer", answer))
    return {std::nullopt, std::move(*problem)};
  InspectAnswer out;
  for (const auto& [id, kernel] : answer.at("kernels").items())
    out.kernels.emplace(id, read_kernel(kernel));
  for (const auto& [id, key] : answer.at("keys").items())
    out.keys.emplace(id, key.is_null() ? std::nullopt : std::optional(key.get<std::string>()));
  out.asked_driver = answer.at("asked_driver").get<bool>();
  if (const auto& found = answer.at("static"); !found.is_null())
    out.static_findings = read_findings(found);
  return {std::move(out), ""};
}

json InspectAnswer::message() const {
  json kernels_out = json::object();
  for (const auto& [id, kernel] : kernels) kernels_out[id] = kernel_message(kernel);
  json keys_out = json::object();
  for (const auto& [id, key] : keys) keys_out[id] = key ? json(*key) : json();
  return {{"status", "ok"},
          {"kernels", std::move(kernels_out)},
          {"keys", std::move(keys_out)},
          {"asked_driver", asked_driver},
          {"static", static_findings ? findings_message(*static_findings) : json()}};
}

}  // namespace portcheck
