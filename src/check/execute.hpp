#pragma once
// EXECUTE, the middle stage of `check`: one Triton environment's planned cells become its
// report's cells. A worker session (from the factory passed in) probes the environment; the
// user's modules are inspected under the cells' limits (cache keys, static predictions, argument
// names); then every cell is served without a compile where it can be (predicted to fail under
// --static skip, --static-only, its module failed to import, or found in the result cache) and
// the rest are compiled by the scheduler. Every verdict comes from interpret().
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/interpret.hpp"
#include "src/check/plan.hpp"
#include "src/check/worker_session.hpp"
#include "src/core/cell.hpp"
#include "src/run/result_cache.hpp"
#include "src/run/tiered_cache.hpp"

namespace portcheck {

struct ExecuteSettings {
  WorkerSessionConfig session;  // python, worker environment, run folder, isolation
  std::size_t jobs = 1;
  StaticMode static_mode = StaticMode::compile;
  bool launch_limits_warn = false;
  bool progress = false;                          // a live progress line on stderr
  std::chrono::steady_clock::time_point started;  // of the run, for the progress line
  TieredCache* cache = nullptr;                   // nullptr: --no-cache
  CellTimings* timings = nullptr;                 // past wall times; required
  std::filesystem::path data;                     // known-failures.toml, launch-limits.toml
  // A multi-version run: a target this Triton cannot compile for is a verdict of its cells
  // (unsupported-target), not a UsageError; the caller refuses it only when every release does.
  bool unsupported_targets_are_cells = false;
};

// What one environment's pass produced, and what the report tells of how it went.
struct ExecutedCells {
  std::vector<CellResult> cells;  // in plan order; a cell cancelled by an interrupt is left out
  bool completed = true;          // false: interrupted
  ProbeAnswer probe;              // the environment's probe answer
  std::optional<StaticFindings> static_result;  // the static pre-checks', when they ran
  std::string triton_version;
  std::uint64_t workers_peak_rss_bytes = 0;
  WorkerStats worker_stats;
  std::size_t from_cache = 0;  // cells served by the result cache
  // Target name -> the probe's description, for each target this Triton cannot compile for
  // (under unsupported_targets_are_cells, or a target the tool ships to; for any other execute()
  // has thrown).
  std::map<std::string, TargetDescription> unsupported_targets;
  std::vector<std::string> warnings;  // Report::warnings
};

// Throws UsageError when the manifest does not fit the installed Triton (unknown option, wrong
// argument names), EnvironmentError when the environment is unusable: both before any cell's
// verdict (a compile that started before the modules' inspections all answered is ended).
ExecutedCells execute(const Manifest& manifest, const Matrix& matrix, Plan plan,
                      const ExecuteSettings& settings, const WorkerSessionFactory& start_session,
                      const std::atomic<bool>& interrupted);

}  // namespace portcheck
