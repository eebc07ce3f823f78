#pragma once
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/run/process_runner.hpp"
#include "src/run/supervisor.hpp"
#include "util/unique_fd.hpp"

namespace portcheck {

struct ForkServerConfig {
  std::vector<std::string> argv;  // python -m portcheck_worker serve
  std::vector<std::string> env;
  std::filesystem::path cwd;
  std::filesystem::path log_dir;                          // server-<n>.stdout / .stderr
  nlohmann::json warm_targets = nlohmann::json::array();  // one per backend the run compiles for
  std::uint64_t max_server_rss_bytes = 4ULL << 30;        // replaced beyond this
  int max_server_starts = 4;
  std::chrono::milliseconds sample_period{20};
};

// `--isolation fork`: one long-lived worker per Triton environment imports Triton once, warms
// each backend up, and forks one child per cell. Every child is its own session, and this side
// learns its pid and enforces the same whole-tree time and memory limits as the Supervisor. A
// server that dies or outgrows its memory bound is replaced and the cells it held are retried once.
class ForkServerRunner final : public ProcessRunner {
 public:
  explicit ForkServerRunner(ForkServerConfig config);
  ForkServerRunner(const ForkServerRunner&) = delete;
  ForkServerRunner& operator=(const ForkServerRunner&) = delete;
  ~ForkServerRunner() override;

  // The worker's probe, answered by the server itself so the run imports Triton only once. A
  // server killed during the probe is replaced once. Throws EnvironmentError when the server
  // cannot start or Triton is unusable.
  nlohmann::json probe(const nlohmann::json& request, std::chrono::seconds timeout);

  void start(Id id, const ProcessSpec& spec) override;
  std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds max_wait) override;
  std::vector<std::pair<Id, ProcessOutcome>> cancel_all() override;
  [[nodiscard]] std::size_t running() const override { return in_flight_.size(); }
  [[nodiscard]] std::uint64_t peak_tree_rss_bytes() const override { return peak_tree_rss_; }

  struct Stats {
    int servers_started = 0;
    int cells_retried = 0;
    double warm_up_seconds = 0;
  };
  [[nodiscard]] const Stats& stats() const { return stats_; }

 private:
  using Clock = SessionLimits::Clock;
  struct Server {
    pid_t pid = -1;
    util::UniqueFd commands;  // we write
    util::UniqueFd events;    // we read
    std::string buffer;
    bool warmed = false;
    bool dead = false;
    int exit_status = 0;  // as waitpid reports it
    std::string spawn_error;
  };
  struct InFlight {
    ProcessSpec spec;
    pid_t pid = 0;  // known once the server says "forked"
    int attempts = 1;
    Clock::time_point requested;
    std::optional<Termination> verdict;  // set when we killed it
    SessionLimits::Entry entry;          // limits and peak memory, kept once it left limits_
  };

  void start_server();
  void stop_server();
  // One probe on the current server (started if need be); nothing when the server did not answer.
  std::optional<nlohmann::json> probe_once(const nlohmann::json& request,
                                           std::chrono::seconds timeout);
  void send(const nlohmann::json& command);
  void send_fork(Id id, const InFlight& cell);
  // Reads what the server has said within `max_wait`; handles "forked"/"exited" itself and
  // returns the other events in order.
  std::vector<nlohmann::json> pump(std::chrono::milliseconds max_wait,
                                   std::vector<std::pair<Id, ProcessOutcome>>& ended);
  nlohmann::json await_event(const std::string& name, std::chrono::milliseconds timeout);
  void ensure_warm();
  void reap(std::vector<std::pair<Id, ProcessOutcome>>& ended);
  void on_server_lost(std::vector<std::pair<Id, ProcessOutcome>>& ended);
  std::string server_log_tail() const;

  ForkServerConfig config_;
  Server server_;
  int generation_ = 0;
  std::map<Id, InFlight> in_flight_;
  std::map<pid_t, Id> by_pid_;
  SessionLimits limits_;
  std::vector<std::pair<Id, ProcessOutcome>> pending_;
  std::uint64_t peak_tree_rss_ = 0;
  Clock::time_point next_sample_{};
  Stats stats_;
};

}  // namespace portcheck
