#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/cell.hpp"
#include "src/core/target.hpp"

namespace portcheck {

// One target's limits, from data/launch-limits.toml (every number cited there).
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

// What launching a compiled cell needs, and what of it exceeds the target's limits.
struct LaunchCheck {
  nlohmann::json needs = nlohmann::json::object();
  // "needs 245760 bytes of shared memory; cuda:90 allows 232448"
  std::vector<std::string> problems;
};

// Reads the cell's compiled metadata (warps, warp size, shared memory, CTAs, tensor memory) and
// its register count; a metadata without a warp size gets the target's.
LaunchCheck check_launch(const CellResult& cell, const TargetLimits& limits);

}  // namespace portcheck
