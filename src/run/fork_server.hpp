#pragma once
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/run/batch_log.hpp"
#include "src/run/probe_answer.hpp"
#include "src/run/process_runner.hpp"
#include "src/run/server_event.hpp"
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
  std::size_t jobs = 1;  // the run's: the zygotes' imports may take the cores its cells leave idle
  std::chrono::milliseconds sample_period{20};  // the shortest time between two walks of /proc
};

// The fork command (the schema's fork_command) for one cell, or for a batch: its cells in order
// and the log they begin and end in.
nlohmann::json fork_command(
    ProcessRunner::Id id, const ProcessSpec& spec,
    const std::vector<std::pair<ProcessRunner::Id, const ProcessSpec*>>& batch = {},
    const std::filesystem::path& batch_log = {});

// `--isolation fork`: one long-lived worker per Triton environment imports Triton once, warms
// each backend up, and forks one child per cell. Every child is its own session, and this side
// learns its pid and enforces the same whole-tree time and memory limits as the Supervisor. A
// server we replace (outgrown memory bound) has its cells retried once. A server that dies on its
// own may have been killed by a cell's code (os.kill(os.getppid(), 9) in a helper), so the cells
// it held become suspects: each is retried alone on a fresh server, and one that kills that server
// too is the culprit (Termination::killed_its_worker); no cell is ever blamed for a neighbour.
class ForkServerRunner final : public ProcessRunner {
 public:
  explicit ForkServerRunner(ForkServerConfig config);
  ForkServerRunner(const ForkServerRunner&) = delete;
  ForkServerRunner& operator=(const ForkServerRunner&) = delete;
  ~ForkServerRunner() override;

  // The worker's probe, answered by the server itself so the run imports Triton only once. A
  // server killed during the probe is replaced once. Throws EnvironmentError when the server
  // cannot start or Triton is unusable.
  ProbeAnswer probe(const nlohmann::json& request, std::chrono::seconds timeout);

  void start(Id id, const ProcessSpec& spec) override;
  // The cells of one forked leader, one after another, each in a child the leader forks after
  // its one import (python/portcheck_worker/cell/batch.py): each begins with its own limits, ends
  // with its result, and the batch log says when (run/batch_log.hpp). A cell begun and not
  // finished ends as Termination::unfinished (the tool runs it alone), but the first when it
  // timed out, which its limit counted as alone; one never begun, as Termination::returned.
  [[nodiscard]] bool runs_batches() const override { return true; }
  void start_batch(const std::vector<std::pair<Id, ProcessSpec>>& cells) override;
  // The batch's stop file (its log's path + ".stop"), which the child looks for before each cell.
  void stop_batch(Id first) override;
  std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds max_wait) override;
  std::vector<std::pair<Id, ProcessOutcome>> cancel_all() override;
  // A batch whose every cell is done is only exiting: the next process need not wait for that.
  [[nodiscard]] std::size_t running() const override;
  [[nodiscard]] std::uint64_t peak_tree_rss_bytes() const override { return peak_tree_rss_; }

  // The run will compile: the warm-up is asked for right after the first cell handed to the
  // server (an inspection), so that the zygotes that will fork compiles warm their backends up as
  // soon as their import ends, while the inspections run, instead of when the first compile waits
  // for them. Without this, it is asked for at the first compiling cell (a run served from the
  // cache never pays it). The server itself warms up then only without zygotes; with them, before
  // the first compile it forks itself (python/portcheck_worker/server/server.py).
  void prewarm() { warm_early_ = true; }

  struct Stats {
    int servers_started = 0;
    int cells_retried = 0;
    double warm_up_seconds = 0;  // the server's and its zygotes' (parallel ones add up)
    // The server's zygotes (python/portcheck_worker/server/zygote_pool.py), bases included:
    // started, whose import failed or outlived its deadline, retired for memory, and the seconds
    // their imports took (each zygote's own, so parallel imports add up).
    int zygotes_started = 0;
    int zygotes_unusable = 0;
    int zygotes_retired = 0;
    double zygote_import_seconds = 0;
    // Processes that ran a batch of cells, the cells they finished, and those they left to run
    // again alone (a crash, a limit, a cell that changed the process, memory grown).
    int batches = 0;
    int cells_in_batches = 0;
    int cells_left_by_batches = 0;
    int cells_returned_by_batches = 0;  // never begun: started again like any other
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
    bool warm_sent = false;
    bool dead = false;
    int exit_status = 0;  // as waitpid reports it
    std::string spawn_error;
  };
  // One cell of a batch, in the order the child runs them.
  struct Member {
    Id id = 0;
    ProcessSpec spec;
    bool begun = false;
    bool done = false;
    Clock::time_point began;           // where its limit and wall time start (but the first's)
    int threads = 0;                   // of the leader when it forked this cell
    std::uint64_t peak_rss_bytes = 0;  // its process's own high-water mark (the done mark)
  };
  // One process the server forks: a cell, or a batch (`members` holds its cells, the first
  // one's id and spec are the process's).
  struct InFlight {
    ProcessSpec spec;
    std::vector<Member> members;
    std::unique_ptr<BatchLogReader> log;
    pid_t pid = 0;  // known once the server says "forked"
    int attempts = 1;
    bool sent = false;        // handed to the server (else waiting in queue_)
    bool suspect = false;     // was running when the server died on its own: retried alone
    int threads = 0;          // of the process that forked it (the "forked" event)
    bool stop_asked = false;  // stop_batch(): the cells it never begins are returned
    double waited = 0;        // from hand-over to the server until it was forked
    // A suspect handed to the server runs as its only cell: its trial.
    [[nodiscard]] bool on_trial() const { return sent && suspect; }
    Clock::time_point requested;
    Clock::time_point forked;            // when the server said "forked"
    std::optional<Termination> verdict;  // set when we killed it
    SessionLimits::Entry entry;          // limits and peak memory, kept once it left limits_
  };

  void start_server();
  void stop_server();
  // One probe on the current server (started if need be); nothing when the server did not answer.
  std::optional<ProbeAnswer> probe_once(const nlohmann::json& request,
                                        std::chrono::seconds timeout);
  void send(const nlohmann::json& command);
  void send_fork(Id id, const InFlight& cell);
  // Queues a process to fork (a cell or a batch) and hands the server what it can take now.
  void enqueue(Id id, InFlight cell);
  // Reads what the server has said within `max_wait`; handles "forked"/"exited" itself and
  // returns the other events in order.
  std::vector<ServerEvent> pump(std::chrono::milliseconds max_wait,
                                std::vector<std::pair<Id, ProcessOutcome>>& ended);
  void on_forked(const ServerForked& event);
  void on_exited(const ServerExited& event, std::vector<std::pair<Id, ProcessOutcome>>& ended);
  // The first event of that name within `timeout`; nullopt when none came.
  std::optional<ServerEvent> await_event(std::string_view name, std::chrono::milliseconds timeout);
  void send_warm();
  void ensure_warm();
  void reap(std::vector<std::pair<Id, ProcessOutcome>>& ended);
  void on_server_lost(std::vector<std::pair<Id, ProcessOutcome>>& ended);
  // Sends queued cells to the server; a suspect only once nothing else runs, and nothing beside it.
  void dispatch();
  std::string server_log_tail() const;
  // A zygote started, became ready, was found unusable or retired: counted in stats_.
  void count_zygote_event(const ServerZygote& event);
  // Replaces the server when its session (it and its zygotes) outgrows max_server_rss_bytes.
  void check_server_size();
  // What the running batches' logs say now: cells begun (their limits armed), cells done.
  void advance_batches(std::vector<std::pair<Id, ProcessOutcome>>& ended);
  void advance(InFlight& batch, std::vector<std::pair<Id, ProcessOutcome>>& ended);
  // A done cell of a batch, as it ended `at`.
  [[nodiscard]] ProcessOutcome member_outcome(const InFlight& batch, std::size_t index,
                                              Clock::time_point at) const;
  // How long the leader took from its fork to the first cell's: the module's import, which each
  // cell alone would have spent within its own time limit.
  [[nodiscard]] static Clock::duration import_time(const InFlight& batch);
  // The batch's process ended with `process`: the first cell, begun and not done, takes a timeout
  // as its end; another begun and not done is unfinished; one never begun is returned.
  void end_batch(InFlight& batch, const ProcessOutcome& process,
                 std::vector<std::pair<Id, ProcessOutcome>>& ended);

  ForkServerConfig config_;
  Server server_;
  int generation_ = 0;
  std::map<Id, InFlight> in_flight_;
  std::map<pid_t, Id> by_pid_;
  std::deque<Id> queue_;     // started but not yet sent, suspects first
  bool replacing_ = false;   // we killed the server ourselves: its death is no cell's doing
  bool warm_early_ = false;  // prewarm()
  int blamed_losses_ = 0;    // server deaths a culprit cell caused: not the server's fault
  SessionLimits limits_;
  std::vector<std::pair<Id, ProcessOutcome>> pending_;
  std::uint64_t peak_tree_rss_ = 0;
  Clock::time_point next_size_check_{};
  Stats stats_;
};

}  // namespace portcheck
