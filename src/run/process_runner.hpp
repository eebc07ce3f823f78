#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace portcheck {

// One isolated process: its own session, output files, a wall-clock limit and a memory limit
// that both apply to every process of that session (compiler children included).
struct ProcessSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // the complete environment, "KEY=value"
  std::filesystem::path cwd;
  std::filesystem::path stdout_path;
  std::filesystem::path stderr_path;
  std::chrono::milliseconds timeout{0};  // 0: none
  std::uint64_t max_rss_bytes = 0;       // 0: none
  // The cell's files, for a runner that hands cells to a fork server instead of running argv.
  std::filesystem::path request_path;
  std::filesystem::path result_path;
  std::filesystem::path progress_path;
  // It compiles a kernel. A fork server warms its backends (about half a second) before the
  // first such cell only: a run whose cells all come from the cache imports modules, nothing more.
  bool compiles = true;
  // Fork it from the bare fork server, never from a zygote that imported user code: how a cell is
  // run again when it failed in a way a fork hazard could explain (see forked_from_threads).
  bool fresh = false;
  // For a fork server: which zygote may fork it, and what that zygote imports (fork_route in
  // python/portcheck_worker/protocol.schema.json, made by check/zygote_key.hpp); null: the
  // server forks it itself.
  nlohmann::json route;
};

enum class Termination {
  exited,             // exit() with some status
  signaled,           // died of a signal nobody here sent
  timed_out,          // killed by us at the wall-clock limit
  out_of_memory,      // killed by us at the memory limit
  cancelled,          // killed by us because the run was interrupted
  spawn_failed,       // the program could not be started
  worker_lost,        // the fork server holding it died twice
  killed_its_worker,  // its code killed the fork server, again when retried alone
  killed_its_parent,  // its code killed the worker process that ran it (--isolation process)
  // Never run to its end: the process of its batch (ProcessRunner::start_batch) ended before it,
  // or while it ran after other cells. Not a verdict: the scheduler runs it again on its own.
  unfinished,
  // Never begun: its batch stopped before it (after a cell that failed or changed the process, or
  // asked to by ProcessRunner::stop_batch). Not a verdict, and nothing touched it: the scheduler
  // starts it again as any cell not yet started.
  returned,
};

struct ProcessOutcome {
  Termination how = Termination::exited;
  int exit_code = 0;
  int signal = 0;
  double wall_seconds = 0;
  // Of the whole session as sampled, or of its largest process as the kernel counted it, whichever
  // is larger.
  std::uint64_t peak_rss_bytes = 0;
  std::string spawn_error;
  // Threads of the process that forked it, its own parent's included (a zygote forked from a
  // threaded base): above 1, a lock another thread held at fork() stays held in the cell. 0 when
  // it was not forked from a long-lived process (a fresh interpreter).
  int forked_from_threads = 0;
  // Of wall_seconds, the time it waited before its process existed (a zygote's import).
  double waited_seconds = 0;
  // Killed at its time limit having used almost no CPU for a while (run/stall.hpp): waiting, as
  // on a lock held since it was forked, rather than computing.
  bool stalled = false;
};

// The scheduler talks to processes only through this, so tests can swap in a fake.
class ProcessRunner {
 public:
  using Id = std::size_t;
  virtual ~ProcessRunner() = default;
  virtual void start(Id id, const ProcessSpec& spec) = 0;
  // Whether start_batch runs several cells one after another in one process (a fork server's
  // child); a runner that cannot starts each on its own.
  [[nodiscard]] virtual bool runs_batches() const { return false; }
  // The cells, in order, in one process, each under its own limits and ending in wait() by itself.
  // A cell the process did not finish ends as Termination::unfinished.
  virtual void start_batch(const std::vector<std::pair<Id, ProcessSpec>>& cells) {
    for (const auto& [id, spec] : cells) start(id, spec);
  }
  // Asks the batch whose first cell is `first` to begin no cell after the one it runs now: each
  // it never began ends as Termination::returned, for another process to take.
  virtual void stop_batch(Id /*first*/) {}
  // Waits up to `max_wait` for at least one cell to end; returns those that ended.
  virtual std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds max_wait) = 0;
  // Kills every running process tree and reports each as cancelled.
  virtual std::vector<std::pair<Id, ProcessOutcome>> cancel_all() = 0;
  // Processes running or waiting to run: a batch is one.
  [[nodiscard]] virtual std::size_t running() const = 0;
  // The largest summed RSS seen of every process this runner started, for reports.
  [[nodiscard]] virtual std::uint64_t peak_tree_rss_bytes() const { return 0; }
};

}  // namespace portcheck
