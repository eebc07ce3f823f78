#include "src/check/launch_limits.hpp"

#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/data_tables.hpp"
#include "src/core/errors.hpp"
#include "util/json_reader.hpp"

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

// A count from the compiled metadata; one that is not a count (negative, fractional, damaged)
// reads as `fallback` rather than as an out-of-range cast.
std::uint64_t number(const nlohmann::json& j, const char* key, std::uint64_t fallback = 0) {
  const auto v = util::integer_member(j, key, 0, std::numeric_limits<std::int64_t>::max());
  return v ? static_cast<std::uint64_t>(*v) : fallback;
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

LaunchCheck check_launch(const CellResult& cell, const TargetLimits& limits) {
  LaunchCheck check;
  const auto& md = cell.metadata;
  const auto warps = number(md, "num_warps", 0);
  const auto warp_size = number(md, "warp_size", checked_target(cell.target).warp_size);
  const auto threads = warps * warp_size;
  const auto shared = number(md, "shared");
  const auto ctas = number(md, "num_ctas", 1);
  check.needs = {{"threads_per_block", threads}, {"shared_bytes", shared}, {"num_ctas", ctas}};
  const auto& target = cell.target;
  if (limits.max_threads_per_block && threads > *limits.max_threads_per_block)
    check.problems.push_back(
        fmt::format("needs {} threads per block ({} warps of {}); {} allows {}", threads, warps,
                    warp_size, target, *limits.max_threads_per_block));
  if (limits.max_shared_bytes_per_block && shared > *limits.max_shared_bytes_per_block)
    check.problems.push_back(fmt::format("needs {} bytes of shared memory; {} allows {}", shared,
                                         target, *limits.max_shared_bytes_per_block));
  if (const auto registers = util::integer_member(cell.resources, "registers", 0, 1 << 20)) {
    const auto regs = static_cast<std::uint64_t>(*registers);
    const auto unit = limits.register_allocation_unit;
    // Registers are allocated per warp, rounded up to the allocation unit.
    const auto per_warp = (regs * warp_size + unit - 1) / unit * unit;
    const auto per_block = per_warp * warps;
    check.needs["registers_per_thread"] = regs;
    check.needs["registers_per_block"] = per_block;
    if (limits.max_registers_per_thread && regs > *limits.max_registers_per_thread)
      check.problems.push_back(fmt::format("needs {} registers per thread; {} allows {}", regs,
                                           target, *limits.max_registers_per_thread));
    if (limits.max_registers_per_block && per_block > *limits.max_registers_per_block)
      check.problems.push_back(fmt::format("needs {} registers per block; {} allows {}", per_block,
                                           target, *limits.max_registers_per_block));
  }
  if (limits.max_cluster_size && ctas > *limits.max_cluster_size)
    check.problems.push_back(fmt::format("needs a cluster of {} CTAs; {} allows {}", ctas, target,
                                         *limits.max_cluster_size));
  const auto tmem = number(md, "tmem_size");
  if (tmem > 0) {
    check.needs["tensor_memory_columns"] = tmem;
    if (limits.max_tensor_memory_columns && tmem > *limits.max_tensor_memory_columns)
      check.problems.push_back(fmt::format("needs {} columns of tensor memory; {} allows {}", tmem,
                                           target, *limits.max_tensor_memory_columns));
  }
  return check;
}

}  // namespace portcheck
