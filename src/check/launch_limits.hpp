#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/target.hpp"

namespace portcheck {

// One target's limits, from data/launch-limits.toml (every number cited there). What a compiled
// kernel needs and whether these allow it are judged by the worker, the rules' one home
// (python/portcheck_worker/compile/launch_rules.py): each compile request carries its target's
// limits (to_json), and the answer says what the kernel needs and what of it they do not allow.
struct TargetLimits {
  std::optional<std::uint64_t> max_threads_per_block;
  std::optional<std::uint64_t> max_shared_bytes_per_block;
  std::optional<std::uint64_t> max_registers_per_block;
  std::optional<std::uint64_t> max_registers_per_thread;
  std::uint64_t register_allocation_unit = 1;
  std::optional<std::uint64_t> max_cluster_size;
  std::optional<std::uint64_t> max_tensor_memory_columns;
  std::string source;
  [[nodiscard]] nlohmann::json to_json() const;
};

class LaunchLimits {
 public:
  static LaunchLimits load(const std::filesystem::path& file);
  // nullopt: the target is not in the table, and is not checked.
  [[nodiscard]] std::optional<TargetLimits> for_target(const Target& target) const;

 private:
  std::map<std::string, TargetLimits> targets_;  // "cuda:90" -> limits (defaults merged in)
};

}  // namespace portcheck
