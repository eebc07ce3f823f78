#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/core/report.hpp"

namespace portcheck {

enum class Isolation { fork, process };
// compile: predict, then compile everything; skip: do not compile predicted failures;
// only: compile nothing, the matrix from predictions alone.
enum class StaticMode { compile, skip, only };

struct CheckOptions {
  std::filesystem::path manifest = "portcheck.toml";
  bool demo = false;
  std::vector<std::string> targets;  // overrides the manifest's
  std::string python;
  std::optional<double> timeout_s;
  std::optional<std::uint64_t> max_rss_bytes;
  std::size_t jobs = 0;   // 0: one per core
  bool progress = false;  // a live progress line on stderr
  Isolation isolation = Isolation::fork;
  bool use_cache = true;
  std::uint64_t cache_max_bytes = 512ULL << 20;
  std::uint64_t worker_max_rss_bytes = 4ULL << 30;
  std::optional<ShardInfo> shard;
  StaticMode static_mode = StaticMode::compile;
  std::vector<std::string> only_rows;               // empty: every row of the manifest
  std::optional<std::filesystem::path> export_dir;  // export: binaries and descriptors go here
  std::vector<std::string> triton;  // environments: "current", "3.8.0"; empty: the manifest's
  bool inherit_site = true;         // version environments see the invoking site-packages
  std::optional<std::filesystem::path> save_ir_dir;  // --save-ir: every stage's IR, for diff --ir
  bool launch_limits_warn = false;  // --launch-limits warn: report, but do not fail
};

// Runs the matrix and returns the report; throws UsageError or EnvironmentError before anything
// is compiled when the input or the environment is wrong.
Report run_check(const CheckOptions& options, const std::atomic<bool>& interrupted);

// 0: no new failures; 1: new failures; 130: interrupted.
int exit_code_for(const Report& report);

}  // namespace portcheck
