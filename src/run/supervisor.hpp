#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "src/run/process_runner.hpp"
#include "src/run/stall.hpp"

namespace portcheck {

// Starts spec.argv in a new session (so its whole tree can be found through /proc and killed
// together), stdin from /dev/null, stdout and stderr to the spec's files, and `extra_fds`
// (child fd <- parent fd) passed down. Returns the pid, or -1 with `error` set.
pid_t spawn_in_new_session(const ProcessSpec& spec,
                           const std::vector<std::pair<int, int>>& extra_fds, std::string* error);

// Time and memory limits over whole sessions. Memory is the summed RSS of every process in the
// session, sampled from /proc, so a runaway ptxas counts against the cell that started it.
class SessionLimits {
 public:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    ProcessRunner::Id id = 0;
    Clock::time_point started;
    Clock::time_point deadline;  // max() when there is no limit
    std::uint64_t max_rss_bytes = 0;
    std::uint64_t peak_rss_bytes = 0;
    std::uint64_t last_rss_bytes = 0;  // at the last sample
    bool sampled = false;
    CpuWindow cpu;         // the session's CPU time, sampled with its memory
    bool stalled = false;  // when killed at its deadline, cpu.stalled()
    // A batch's leader, which forks each cell: while a cell's process exists, the session's
    // memory is the cell's (its copy of the leader's pages counted in it, as a cell forked alone
    // counts its zygote's), not the leader's as well.
    bool leader_forks_cells = false;
  };

  // A walk of /proc costs about a millisecond of system time, so sampling every `shortest` all
  // run long cost 8 s of a 2-core machine's 213 s on a 4,430-cell run. Sessions far from their
  // limits are sampled less often: see sample_due().
  explicit SessionLimits(std::chrono::milliseconds shortest = std::chrono::milliseconds(20),
                         std::chrono::milliseconds longest = std::chrono::milliseconds(250))
      : shortest_(shortest), longest_(longest) {}

  // `started`: when its wall time begins (wall_seconds); `born`: when its process began to exist,
  // where its time limit begins. A cell handed to a fork server may wait for a zygote's import
  // before it is forked: that wait is the tool's, not the cell's (issue 42).
  void watch(pid_t session, ProcessRunner::Id id, const ProcessSpec& spec,
             Clock::time_point started, Clock::time_point born);
  // The session's next cell (a batch's: ForkServerRunner::start_batch), from `began`: its id and
  // limits, its peak anew, its CPU window anew. `spent`: the time the cell would have spent alone
  // before it began here (the import its batch's leader did once for all), charged to its limit.
  void rearm(pid_t session, ProcessRunner::Id id, const ProcessSpec& spec, Clock::time_point began,
             Clock::duration spent = {});
  // The session is a batch's whose leader forks each cell (Entry::leader_forks_cells).
  void leader_forks_cells(pid_t session);
  [[nodiscard]] const Entry* find(pid_t session) const;
  Entry take(pid_t session);
  [[nodiscard]] const std::map<pid_t, Entry>& entries() const { return entries_; }

  // Whether enforce() has something to catch by `now`: a deadline passed, or the session nearest
  // its memory limit could have reached it since the last sample, growing as fast as a process
  // can fault pages in. Never sooner than `shortest` after the last sample, always by `longest`;
  // at once for a new session whose limit is that close, which a short cell would else escape.
  [[nodiscard]] bool sample_due(Clock::time_point now) const;

  // Samples /proc once and kills every session past its deadline or memory limit, returning
  // those, and every stray (util::kill_strays) outside the watched sessions and `also_count`.
  // `total_rss` receives the summed RSS of the watched sessions plus `also_count`.
  std::vector<std::pair<pid_t, Termination>> enforce(const std::vector<pid_t>& also_count = {},
                                                     std::uint64_t* total_rss = nullptr);

 private:
  std::map<pid_t, Entry> entries_;
  std::chrono::milliseconds shortest_;
  std::chrono::milliseconds longest_;
  Clock::time_point last_sample_{};
};

// When the rest of an ended cell's session dies: `now` walks /proc until none of it is left;
// `at_next_sample` kills the leader's process group now and leaves what it put in other groups
// to the next SessionLimits::enforce (kill_strays: they are re-parented to us), one sample
// period later, saving a walk of /proc per cell where cells are many and short (fork server).
enum class Sweep { now, at_next_sample };

// The outcome of a session leader that ended, its session killed so nothing outlives it.
ProcessOutcome finish_session(pid_t leader, const SessionLimits::Entry& entry, Termination how,
                              int wait_status, Sweep sweep = Sweep::now);

// The ProcessRunner of `--isolation process`: one fresh process per cell. This process becomes a
// subreaper, so a grandchild whose parent died is handed to us rather than to init. It reaps with
// waitpid(-1), so only one runner may have children at a time in a process.
class Supervisor final : public ProcessRunner {
 public:
  explicit Supervisor(std::chrono::milliseconds sample_period = std::chrono::milliseconds(20));
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  ~Supervisor() override;

  void start(Id id, const ProcessSpec& spec) override;
  std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds max_wait) override;
  std::vector<std::pair<Id, ProcessOutcome>> cancel_all() override;
  [[nodiscard]] std::size_t running() const override { return limits_.entries().size(); }
  [[nodiscard]] std::uint64_t peak_tree_rss_bytes() const override { return peak_tree_rss_; }

 private:
  void reap(std::vector<std::pair<Id, ProcessOutcome>>& ended);

  std::chrono::milliseconds sample_period_;
  SessionLimits limits_;
  std::vector<std::pair<Id, ProcessOutcome>> pending_;  // ended before anyone asked
  std::map<pid_t, std::filesystem::path> progress_;     // of each session that has one
  std::uint64_t peak_tree_rss_ = 0;
};

}  // namespace portcheck
