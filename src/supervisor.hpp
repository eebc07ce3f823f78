#pragma once
#include <sys/types.h>

#include <chrono>
#include <map>

#include "src/process_runner.hpp"

namespace portcheck {

// The real ProcessRunner. Each child starts a new session (setsid) so that its whole tree can be
// found through /proc and killed together; this process becomes a subreaper so no grandchild is
// left to init. Memory is the summed RSS of the session, sampled every `sample_period`.
// It reaps with waitpid(-1), so only one Supervisor may have children at a time in a process.
class Supervisor final : public ProcessRunner {
 public:
  explicit Supervisor(std::chrono::milliseconds sample_period = std::chrono::milliseconds(20));
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  ~Supervisor() override;

  void start(Id id, const ProcessSpec& spec) override;
  std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds max_wait) override;
  std::vector<std::pair<Id, ProcessOutcome>> cancel_all() override;
  [[nodiscard]] std::size_t running() const override { return children_.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Child {
    Id id;
    Clock::time_point started;
    Clock::time_point deadline;  // max() when there is no limit
    std::uint64_t max_rss_bytes;
    std::uint64_t peak_rss_bytes = 0;
  };
  void enforce_limits(std::vector<std::pair<Id, ProcessOutcome>>& ended);
  ProcessOutcome finish(pid_t pid, const Child& child, Termination how, int status);
  void reap(std::vector<std::pair<Id, ProcessOutcome>>& ended);

  std::chrono::milliseconds sample_period_;
  std::map<pid_t, Child> children_;
  std::vector<std::pair<Id, ProcessOutcome>> pending_;  // ended before anyone asked
};

}  // namespace portcheck
