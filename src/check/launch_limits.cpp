#include "src/check/launch_limits.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/data_tables.hpp"
#include "src/core/errors.hpp"

namespace portcheck {
namespace {

std::optional<std::uint64_t> read(const toml::table& table, const char* key) {
  if (const auto v = table[key].value<std::int64_t>(); v && *v > 0)
    return static_cast<std::uint64_t>(*v);
  return std::nullopt;
}

void merge(const toml::table& table, TargetLimits& limits) {
  if (auto v = read(table, "max_threads_per_block")) limits.max_threads_per_block = v;
  if (auto v = read(table, "max_shared_bytes_per_block")) limits.max_shared_bytes_per_block = v;
  if (auto v = read(table, "max_registers_per_block")) limits.max_registers_per_block = v;
  if (auto v = read(table, "max_registers_per_thread")) limits.max_registers_per_thread = v;
  if (auto v = read(table, "register_allocation_unit")) limits.register_allocation_unit = *v;
  if (auto v = read(table, "max_cluster_size")) limits.max_cluster_size = v;
  if (auto v = read(table, "max_tensor_memory_columns")) limits.max_tensor_memory_columns = v;
  if (auto s = table["source"].value<std::string>()) limits.source = *s;
}

}  // namespace

nlohmann::json TargetLimits::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  const auto put = [&](const char* key, const std::optional<std::uint64_t>& v) {
    if (v) j[key] = *v;
  };
  put("max_threads_per_block", max_threads_per_block);
  put("max_shared_bytes_per_block", max_shared_bytes_per_block);
  put("max_registers_per_block", max_registers_per_block);
  put("max_registers_per_thread", max_registers_per_thread);
  put("register_allocation_unit", register_allocation_unit);
  put("max_cluster_size", max_cluster_size);
  put("max_tensor_memory_columns", max_tensor_memory_columns);
  if (!source.empty()) j["source"] = source;
  return j;
}

LaunchLimits LaunchLimits::load(const std::filesystem::path& file) {
  LaunchLimits out;
  const auto root = load_data_table(file, "launch-limit table");
  if (!root) return out;
  for (const auto& [backend, node] : *root) {
    const auto* archs = node.as_table();
    if (archs == nullptr) continue;
    TargetLimits defaults;
    if (const auto* d = (*archs)["defaults"].as_table()) merge(*d, defaults);
    for (const auto& [arch, arch_node] : *archs) {
      if (arch.str() == "defaults" || !arch_node.is_table()) continue;
      TargetLimits limits = defaults;
      merge(*arch_node.as_table(), limits);
      out.targets_[fmt::format("{}:{}", backend.str(), arch.str())] = limits;
    }
  }
  return out;
}

std::optional<TargetLimits> LaunchLimits::for_target(const Target& target) const {
  const auto it = targets_.find(target.name());
  if (it == targets_.end()) return std::nullopt;
  return it->second;
}

}  // namespace portcheck
