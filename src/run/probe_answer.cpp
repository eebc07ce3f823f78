#include "src/run/probe_answer.hpp"

#include "src/run/worker_protocol.hpp"

#include "util/json_reader.hpp"

namespace portcheck {
namespace {

// Each reader below runs on a value the schema has checked: a member it reads is there, of its
// type, and optional only where the schema says so.

TargetProblem read_problem(const nlohmann::json& p) {
  return {p.at("reason").get<std::string>(), p.at("message").get<std::string>(),
          p.at("valid").get<std::vector<std::string>>(),
          util::optional_member<std::vector<std::string>>(p, "nearest")
              .value_or(std::vector<std::string>{})};
}

TargetDescription read_target(const nlohmann::json& t) {
  TargetDescription out;
  out.name = t.at("name").get<std::string>();
  out.backend = t.at("backend").get<std::string>();
  out.arch = t.at("arch").get<std::string>();
  out.warp_size = util::optional_member<int>(t, "warp_size");
  if (const auto it = t.find("assembler"); it != t.end()) {
    out.assembler_path = util::optional_member<std::string>(*it, "path");
    out.assembler_version = it->at("version").get<std::string>();
  }
  out.error = util::optional_member<std::string>(t, "error");
  if (const auto it = t.find("unsupported"); it != t.end()) out.unsupported = read_problem(*it);
  return out;
}

nlohmann::json problem_message(const TargetProblem& p) {
  return {{"reason", p.reason}, {"message", p.message}, {"valid", p.valid}, {"nearest", p.nearest}};
}

nlohmann::json target_message(const TargetDescription& t) {
  nlohmann::json out = {{"name", t.name}, {"backend", t.backend}, {"arch", t.arch}};
  if (t.warp_size) out["warp_size"] = *t.warp_size;
  if (t.assembler_version)
    out["assembler"] = {{"path", t.assembler_path ? nlohmann::json(*t.assembler_path) : nullptr},
                        {"version", *t.assembler_version}};
  if (t.error) out["error"] = *t.error;
  if (t.unsupported) out["unsupported"] = problem_message(*t.unsupported);
  return out;
}

}  // namespace

StaticTables StaticTables::from_checked(const nlohmann::json& tables) {
  StaticTables out;
  out.libdevice = tables.at("libdevice").get<std::map<std::string, std::vector<std::string>>>();
  for (const auto& [target, dtypes] : tables.at("fp8").items()) {
    if (dtypes.is_array())
      out.fp8.emplace(target, dtypes.get<std::vector<std::string>>());
    else
      out.fp8.emplace(target, dtypes.at("error").get<std::string>());
  }
  return out;
}

nlohmann::json StaticTables::message() const {
  auto fp8_out = nlohmann::json::object();
  for (const auto& [target, dtypes] : fp8)
    fp8_out[target] = std::holds_alternative<std::string>(dtypes)
                          ? nlohmann::json{{"error", std::get<std::string>(dtypes)}}
                          : nlohmann::json(std::get<std::vector<std::string>>(dtypes));
  return {{"libdevice", libdevice}, {"fp8", std::move(fp8_out)}};
}

nlohmann::json ProbeAnswer::message() const {
  auto targets_out = nlohmann::json::array();
  for (const auto& t : targets) targets_out.push_back(target_message(t));
  return {
      {"protocol", protocol},
      {"worker", worker},
      {"python", {{"version", python_version}, {"executable", python_executable}}},
      {"site_packages", site_packages},
      {"triton", {{"version", triton_version}, {"path", triton_path}, {"family", triton_family}}},
      {"option_fields", option_fields},
      {"targets", std::move(targets_out)},
      {"static",
       static_tables ? nlohmann::json{{"tables", static_tables->message()}} : nlohmann::json()},
      {"signal_guard_off", signal_guard_off ? nlohmann::json(*signal_guard_off) : nullptr}};
}

ProbeAnswer ProbeAnswer::read(const nlohmann::json& answer) {
  expect_protocol("probe_answer", answer);
  ProbeAnswer out;
  out.protocol = answer.at("protocol").get<int>();
  out.worker = answer.at("worker").get<std::string>();
  out.python_version = answer.at("python").at("version").get<std::string>();
  out.python_executable = answer.at("python").at("executable").get<std::string>();
  out.site_packages = answer.at("site_packages").get<std::vector<std::string>>();
  out.triton_version = answer.at("triton").at("version").get<std::string>();
  out.triton_path = answer.at("triton").at("path").get<std::string>();
  out.triton_family = answer.at("triton").at("family").get<std::string>();
  out.option_fields =
      answer.at("option_fields").get<std::map<std::string, std::vector<std::string>>>();
  for (const auto& t : answer.at("targets")) out.targets.push_back(read_target(t));
  if (const auto& found = answer.at("static"); !found.is_null())
    out.static_tables = StaticTables::from_checked(found.at("tables"));
  out.signal_guard_off = util::optional_member<std::string>(answer, "signal_guard_off");
  return out;
}

}  // namespace portcheck
