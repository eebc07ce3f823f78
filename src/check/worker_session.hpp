#pragma once
// Where one Triton environment's work runs: the probe of the environment and the runner of every
// process after it (module inspections, cells). The real session (start_worker_session) wraps
// the fork server (--isolation fork) or a Supervisor and the worker's probe (--isolation
// process); unit tests pass their own factory, with a scripted probe and a fake runner, so the
// whole pipeline runs without Triton.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/check_options.hpp"
#include "src/core/tool_files.hpp"
#include "src/run/probe_answer.hpp"
#include "src/run/process_runner.hpp"

namespace portcheck {

struct WorkerSessionConfig {
  std::string python;
  std::vector<std::string> env;   // the run's worker environment
  std::filesystem::path run_dir;  // the run's scratch: worker logs, the probe's files
  nlohmann::json warm_targets;    // one target per backend, for the fork server's warm-up
  Isolation isolation = Isolation::fork;
  std::uint64_t worker_max_rss_bytes = 4ULL << 30;
  std::size_t jobs = 1;  // cells at once: the fork server starts zygotes on the cores left idle
  ShareDirs share;
};

// How the workers fared, for the report's resources block (zeros without a fork server).
struct WorkerStats {
  int servers_started = 0;
  int cells_retried = 0;
  double warm_up_seconds = 0;
  int zygotes_started = 0;  // the fork server's zygotes (ForkServerRunner::Stats)
  int zygotes_unusable = 0;
  int zygotes_retired = 0;
  double zygote_import_seconds = 0;
  int batches = 0;  // ForkServerRunner::Stats
  int cells_in_batches = 0;
  int cells_left_by_batches = 0;
  int cells_returned_by_batches = 0;
  // Cells and inspections run again in a fresh process (check/fork_hazard.hpp); the pipeline
  // counts them, not the session.
  int cells_rerun_fresh = 0;
};

class WorkerSession {
 public:
  WorkerSession() = default;
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;
  virtual ~WorkerSession() = default;  // no worker outlives its session

  // The environment alone (never the user's modules): Triton's version and path, Python, option
  // fields, each target's warp size. Throws EnvironmentError with the fix when Triton is unusable.
  virtual ProbeAnswer probe(const nlohmann::json& request) = 0;
  virtual ProcessRunner& runner() = 0;
  [[nodiscard]] virtual WorkerStats stats() const { return {}; }
  // The run will compile cells: a fork server warms up while the modules' imports run rather
  // than when the first compile waits for it (ForkServerRunner::prewarm). Nothing otherwise.
  virtual void prewarm() {}
};

using WorkerSessionFactory =
    std::function<std::unique_ptr<WorkerSession>(const WorkerSessionConfig&)>;

// The real session: a ForkServerRunner, or a Supervisor with the worker's probe.
std::unique_ptr<WorkerSession> start_worker_session(const WorkerSessionConfig& config);

}  // namespace portcheck
