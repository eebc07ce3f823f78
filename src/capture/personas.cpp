#include "src/capture/personas.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/data_tables.hpp"
#include "src/core/errors.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// A TOML value as the hook reads it: numbers, strings, booleans and lists of those.
nlohmann::json to_json(const toml::node& node) {
  if (const auto* array = node.as_array()) {
    auto out = nlohmann::json::array();
    for (const auto& item : *array) out.push_back(to_json(item));
    return out;
  }
  if (const auto v = node.value_exact<std::int64_t>()) return *v;
  if (const auto v = node.value_exact<double>()) return *v;
  if (const auto v = node.value_exact<bool>()) return *v;
  if (const auto v = node.value_exact<std::string>()) return *v;
  return nullptr;
}

void merge_into(const toml::table& table, nlohmann::json& device) {
  for (const auto& [key, value] : table) device[std::string(key.str())] = to_json(value);
}

// The device table of `target`, its backend's defaults under it; nullopt when it has none.
std::optional<nlohmann::json> device_of(const toml::table& root, const Target& target) {
  const auto* backend = root[target.backend.name()].as_table();
  if (backend == nullptr) return std::nullopt;
  const auto* own = (*backend)[target.arch].as_table();
  if (own == nullptr) return std::nullopt;
  auto device = nlohmann::json::object();
  if (const auto* defaults = (*backend)["defaults"].as_table()) merge_into(*defaults, device);
  merge_into(*own, device);
  device["target"] = target.name();
  device["backend"] = std::string(target.backend.name());
  device["arch"] = target.arch;
  if (!device.contains("warp_size")) device["warp_size"] = target.warp_size;
  // A CUDA device's capability is its target's; AMD's is in the table (gfx942 reports 9.4).
  if (!device.contains("capability") && target.backend == Backend::cuda) {
    const int capability = std::stoi(target.arch);
    device["capability"] = {capability / 10, capability % 10};
  }
  return device;
}

// The device is the capture_persona message of protocol.schema.json, which says what the hook
// answers with: a table that lacks a field (or names one the hook does not know) is a damaged
// installation, said before the user's tests start rather than as a KeyError inside them.
void require_persona(const nlohmann::json& device, const std::filesystem::path& table) {
  if (const auto problem = protocol_problem("capture_persona", device))
    throw EnvironmentError(fmt::format(
        "{}: the device of {} is not a persona the capture hook can answer with: {} (a damaged "
        "installation: reinstall triton-portcheck)",
        table.string(), device.value("target", std::string("?")), *problem));
  // The schema cannot say "gcnArchName when the backend is hip" without repeating the device.
  if (device.at("backend") == "hip" && !device.contains("gcnArchName"))
    throw EnvironmentError(
        fmt::format("{}: the device of {} has no 'gcnArchName' (a damaged installation: reinstall "
                    "triton-portcheck)",
                    table.string(), device.at("target").get<std::string>()));
}

std::vector<std::string> described_targets(const toml::table& root) {
  std::vector<std::string> out;
  for (const auto& [backend, archs] : root)
    if (const auto* table = archs.as_table())
      for (const auto& [arch, value] : *table)
        if (arch.str() != "defaults" && value.is_table())
          out.push_back(fmt::format("{}:{}", backend.str(), arch.str()));
  return out;
}

}  // namespace

std::vector<Persona> load_personas(const std::filesystem::path& table,
                                   const std::vector<std::string>& names) {
  const auto root = load_data_table(table, "device persona table").value_or(toml::table{});
  std::vector<Persona> personas;
  for (const auto& name : names) {
    std::string error;
    const auto target = parse_target(name, &error);
    if (!target) throw UsageError(fmt::format("--as {}: {}", name, error));
    if (std::any_of(personas.begin(), personas.end(),
                    [&](const Persona& p) { return p.target == *target; }))
      throw UsageError(fmt::format("--as: {} is named twice", name));
    auto device = device_of(root, *target);
    if (!device)
      throw UsageError(fmt::format(
          "--as {}: no device of this target is described in {} (no shipping product's figures "
          "are public); personas exist for {}",
          name, table.filename().string(), util::join(described_targets(root), ", ")));
    require_persona(*device, table);
    personas.push_back({*target, std::move(*device)});
  }
  return personas;
}

}  // namespace portcheck
