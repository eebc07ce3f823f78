#include "src/run/fork_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/worker_channels.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// Pipe ends moved above the standard descriptors and the 3/4 the server expects, close-on-exec,
// so posix_spawn's dup2 always makes a fresh inheritable copy.
std::pair<util::UniqueFd, util::UniqueFd> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw EnvironmentError(fmt::format("pipe: {}", std::strerror(errno)));
  util::UniqueFd read_end(::fcntl(fds[0], F_DUPFD_CLOEXEC, 10));
  util::UniqueFd write_end(::fcntl(fds[1], F_DUPFD_CLOEXEC, 10));
  ::close(fds[0]);
  ::close(fds[1]);
  return {std::move(read_end), std::move(write_end)};
}

}  // namespace

ForkServerRunner::ForkServerRunner(ForkServerConfig config)
    : config_(std::move(config)), limits_(config_.sample_period) {
  util::become_subreaper();
  ::signal(SIGPIPE, SIG_IGN);  // a dead server must be an error we handle, not our death
}

ForkServerRunner::~ForkServerRunner() {
  cancel_all();
  stop_server();
}

void ForkServerRunner::start_server() {
  // A server a culprit cell killed does not count: the limit is for a server that keeps dying.
  if (generation_ - blamed_losses_ >= config_.max_server_starts) {
    server_ = Server{};
    server_.dead = true;
    return;
  }
  ++generation_;
  ++stats_.servers_started;
  auto [command_read, command_write] = make_pipe();
  auto [event_read, event_write] = make_pipe();
  ProcessSpec spec;
  spec.argv = config_.argv;
  spec.env = config_.env;
  spec.env.push_back(fmt::format("{}={}", channels::kServerGeneration, generation_));
  // Its zygotes keep within a share of it (zygote_pool.py), so that they never get it replaced.
  spec.env.push_back(fmt::format("{}={}", channels::kServerMaxRss, config_.max_server_rss_bytes));
  spec.env.push_back(fmt::format("{}={}", channels::kServerJobs, config_.jobs));
  spec.cwd = config_.cwd;
  spec.stdout_path = config_.log_dir / fmt::format("server-{}.stdout", generation_);
  spec.stderr_path = config_.log_dir / fmt::format("server-{}.stderr", generation_);
  std::string error;
  server_ = Server{};
  server_.pid =
      spawn_in_new_session(spec, {{3, command_read.get()}, {4, event_write.get()}}, &error);
  if (server_.pid < 0) {
    server_.dead = true;
    server_.spawn_error = error;
    return;
  }
  server_.commands = std::move(command_write);
  server_.events = std::move(event_read);
  ::fcntl(server_.events.get(), F_SETFL, ::fcntl(server_.events.get(), F_GETFL) | O_NONBLOCK);
}

void ForkServerRunner::stop_server() {
  if (server_.pid <= 0 || server_.dead) return;
  send({{"op", "quit"}});
  server_.commands.reset();
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  int status = 0;
  while (::waitpid(server_.pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      util::kill_session(server_.pid);
      while (::waitpid(server_.pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    ::usleep(2000);
  }
  server_.dead = true;
  server_.exit_status = status;
}

void ForkServerRunner::send(const nlohmann::json& command) {
  if (server_.dead || !server_.commands.valid()) return;
  const std::string line = command.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(server_.commands.get(), line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EPIPE: the server is gone; reap() notices and recovers
    }
    done += static_cast<std::size_t>(n);
  }
}

namespace {

// A cell's files as a fork command names them.
nlohmann::json cell_files(const ProcessSpec& spec) {
  return {{"request", spec.request_path.string()},
          {"result", spec.result_path.string()},
          {"progress", spec.progress_path.string()},
          {"stdout", spec.stdout_path.string()},
          {"stderr", spec.stderr_path.string()}};
}

}  // namespace

nlohmann::json fork_command(
    ProcessRunner::Id id, const ProcessSpec& spec,
    const std::vector<std::pair<ProcessRunner::Id, const ProcessSpec*>>& batch,
    const std::filesystem::path& batch_log) {
  auto command = cell_files(spec);
  command.update({{"op", "fork"},
                  {"id", id},
                  // A zygote importing the cell's package gives up within a share of these.
                  {"timeout_ms", spec.timeout.count()},
                  {"max_rss_bytes", spec.max_rss_bytes},
                  {"fresh", spec.fresh},
                  // The server warms itself, when it put that off, before the first compile it
                  // forks.
                  {"compiles", spec.compiles},
                  // What the server routes it by (a batch: by its first cell, whose zygote its
                  // cells share), checked with the command: never read from the request file.
                  {"route", spec.route}});
  if (batch.empty()) return command;
  auto members = nlohmann::json::array();
  for (const auto& [member, member_spec] : batch) {
    auto files = cell_files(*member_spec);
    files.update({{"id", member}, {"max_rss_bytes", member_spec->max_rss_bytes}});
    members.push_back(std::move(files));
  }
  command["batch"] = std::move(members);
  command["batch_log"] = batch_log.string();
  return command;
}

void ForkServerRunner::send_fork(Id id, const InFlight& cell) {
  if (cell.log == nullptr) return send(fork_command(id, cell.spec));
  // The members' specs are read where they are, never copied (each holds the whole environment).
  std::vector<std::pair<Id, const ProcessSpec*>> batch;
  for (const auto& member : cell.members) batch.emplace_back(member.id, &member.spec);
  send(fork_command(id, cell.spec, batch, cell.log->path()));
}

void ForkServerRunner::on_forked(const ServerForked& event) {
  const auto id = static_cast<Id>(event.id);
  const auto pid = static_cast<pid_t>(event.pid);
  const auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  it->second.pid = pid;
  it->second.threads = static_cast<int>(event.threads);
  it->second.waited = std::chrono::duration<double>(Clock::now() - it->second.requested).count();
  by_pid_[pid] = id;
  // Its wall time counts from the hand-over (waited_s says how much of it was waiting), its
  // time limit from now: under load a zygote's import may outlive its deadline, and a cell
  // then charged with that wait timed out importing for itself where a fresh process did
  // not (issue 42).
  it->second.forked = Clock::now();
  limits_.watch(pid, id, it->second.spec, it->second.requested, it->second.forked);
  if (it->second.log != nullptr) limits_.leader_forks_cells(pid);
}

void ForkServerRunner::on_exited(const ServerExited& event,
                                 std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  const auto pid = static_cast<pid_t>(event.pid);
  const auto at = by_pid_.find(pid);
  if (at == by_pid_.end()) return;
  const Id id = at->second;
  by_pid_.erase(at);
  auto& cell = in_flight_.at(id);
  SessionLimits::Entry entry = limits_.find(pid) ? limits_.take(pid) : cell.entry;
  // Its largest process's high-water mark, which the server had from wait4().
  entry.peak_rss_bytes = std::max(entry.peak_rss_bytes, event.max_rss_bytes);
  // As waitpid encodes it.
  const int status = event.signal ? static_cast<int>(*event.signal & 0x7f)
                                  : static_cast<int>((event.code.value_or(0) & 0xff) << 8);
  // Many short cells: the rest of a finished cell's session goes at the next sample.
  auto outcome = finish_session(pid, entry, cell.verdict.value_or(Termination::exited), status,
                                Sweep::at_next_sample);
  outcome.forked_from_threads = cell.threads;
  outcome.waited_seconds = cell.waited;
  if (cell.log != nullptr)
    end_batch(cell, outcome, ended);
  else
    ended.emplace_back(id, std::move(outcome));
  in_flight_.erase(id);
}

std::vector<ServerEvent> ForkServerRunner::pump(std::chrono::milliseconds max_wait,
                                                std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  std::vector<ServerEvent> other;
  if (server_.dead || !server_.events.valid()) return other;
  pollfd pfd{server_.events.get(), POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(max_wait.count())) <= 0) return other;
  char chunk[65536];
  while (true) {
    const ssize_t n = ::read(server_.events.get(), chunk, sizeof chunk);
    if (n > 0) {
      server_.buffer.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) server_.events.reset();  // end of output: the server is exiting
    break;
  }
  std::size_t newline;
  while ((newline = server_.buffer.find('\n')) != std::string::npos) {
    const std::string line = server_.buffer.substr(0, newline);
    server_.buffer.erase(0, newline + 1);
    auto event = read_server_event(line);
    if (!event) continue;
    if (const auto* warmed = std::get_if<ServerWarmed>(&*event)) {
      server_.warmed = true;
      stats_.warm_up_seconds += warmed->seconds;
    }
    if (const auto* forked = std::get_if<ServerForked>(&*event))
      on_forked(*forked);
    else if (const auto* exited = std::get_if<ServerExited>(&*event))
      on_exited(*exited, ended);
    else if (const auto* zygote = std::get_if<ServerZygote>(&*event))
      count_zygote_event(*zygote);
    else
      other.push_back(std::move(*event));
  }
  return other;
}

void ForkServerRunner::reap(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  bool lost = false;
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    if (pid == server_.pid) {
      server_.exit_status = status;
      lost = true;
    }
    // Anything else is an orphan re-parented to us (a killed cell's ptxas): nothing to report.
  }
  if (!lost && !server_.dead && !server_.events.valid()) {
    // End of output without an exit yet: make sure it is gone, then treat it as lost.
    util::kill_session(server_.pid);
    int status = 0;
    while (::waitpid(server_.pid, &status, 0) < 0 && errno == EINTR) {
    }
    server_.exit_status = status;
    lost = true;
  }
  if (lost) on_server_lost(ended);
}

void ForkServerRunner::on_server_lost(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  server_.dead = true;
  server_.commands.reset();
  server_.events.reset();
  const bool ours = std::exchange(replacing_, false);
  std::vector<Id> again, batches;
  for (auto& [id, cell] : in_flight_) {
    if (!cell.sent) continue;  // still queued: it never met the dead server
    SessionLimits::Entry entry = cell.entry;
    if (cell.pid > 0) {
      util::kill_session(cell.pid);
      if (limits_.find(cell.pid)) entry = limits_.take(cell.pid);
      by_pid_.erase(cell.pid);
    }
    ProcessOutcome lost;
    if (cell.log != nullptr) {  // its first cell's verdict if we had one; the rest, alone again
      lost.how = Termination::unfinished;
      end_batch(cell, cell.verdict ? finish_session(cell.pid, entry, *cell.verdict, SIGKILL) : lost,
                ended);
      batches.push_back(id);
    } else if (cell.verdict) {  // we had already killed it: its verdict stands
      auto outcome = finish_session(cell.pid > 0 ? cell.pid : 0, entry, *cell.verdict, SIGKILL);
      outcome.forked_from_threads = cell.threads;  // a fork hazard's timeout is still rerun
      outcome.waited_seconds = cell.waited;
      ended.emplace_back(id, std::move(outcome));
    } else if (cell.on_trial() && !ours) {  // nothing else ran: its own code killed the server
      ++blamed_losses_;
      lost.how = Termination::killed_its_worker;
      ended.emplace_back(id, lost);
    } else if (cell.attempts >= 2 && (ours || cell.on_trial())) {
      lost.how = Termination::worker_lost;
      ended.emplace_back(id, lost);
    } else {
      cell.suspect = cell.suspect || !ours;
      again.push_back(id);
    }
  }
  for (const auto& [id, outcome] : ended) in_flight_.erase(id);
  for (const Id id : batches) in_flight_.erase(id);
  for (const Id id : again) {
    auto& cell = in_flight_.at(id);
    cell.sent = false;
    cell.pid = 0;
    ++cell.attempts;
    ++stats_.cells_retried;
  }
  queue_.insert(queue_.begin(), again.begin(), again.end());  // older than anything queued
  if (queue_.empty()) return;
  start_server();
  ensure_warm();
  if (server_.dead) {
    for (const Id id : queue_) {
      ProcessOutcome lost;
      lost.how = Termination::worker_lost;
      ended.emplace_back(id, lost);
      in_flight_.erase(id);
    }
    queue_.clear();
    return;
  }
  dispatch();
}

void ForkServerRunner::dispatch() {
  if (server_.dead) return;
  bool busy = false;
  for (const auto& [id, cell] : in_flight_) {
    if (cell.on_trial()) return;  // nothing beside a suspect on trial
    busy = busy || cell.sent;
  }
  while (!queue_.empty()) {
    auto& cell = in_flight_.at(queue_.front());
    if (cell.suspect && busy) return;  // waits until the server is idle
    cell.sent = true;
    cell.requested = Clock::now();
    send_fork(queue_.front(), cell);
    queue_.pop_front();
    if (cell.on_trial()) return;
    busy = true;
  }
}

std::optional<ServerEvent> ForkServerRunner::await_event(std::string_view name,
                                                         std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<std::pair<Id, ProcessOutcome>> ended;
  while (!server_.dead && Clock::now() < deadline) {
    for (auto& event : pump(std::chrono::milliseconds(50), ended))
      if (event_name(event) == name) {
        pending_.insert(pending_.end(), ended.begin(), ended.end());
        return event;
      }
    int status = 0;
    const pid_t pid = ::waitpid(server_.pid, &status, WNOHANG);
    if (pid == server_.pid) {
      server_.exit_status = status;
      server_.dead = true;
    }
  }
  pending_.insert(pending_.end(), ended.begin(), ended.end());
  return std::nullopt;
}

void ForkServerRunner::send_warm() {
  send({{"op", "warm"}, {"targets", config_.warm_targets}});
  server_.warm_sent = true;
}

void ForkServerRunner::ensure_warm() {
  if (server_.dead || server_.warmed) return;
  if (!server_.warm_sent) send_warm();
  // pump() marks the server warm when the reply arrives, here or earlier; a server that died
  // while warming is handled by the next reap().
  await_event("warm", std::chrono::minutes(10));
}

void ForkServerRunner::check_server_size() {
  // Once a second, and by proportional set size: the zygotes share most of their pages with the
  // server (Triton, LLVM) and with each other (torch), which a sum of RSS counts once per process
  // (9 GiB for 3 GiB of memory on the H200 with flag_gems), and smaps_rollup costs too much to
  // read at the cells' sampling rate. What this guards against is a slow leak, not a bomb: a
  // zygote's import runs under RLIMIT_DATA (zygote/process.py).
  if (server_.dead || Clock::now() < next_size_check_) return;
  next_size_check_ = Clock::now() + std::chrono::seconds(1);
  // PSS never exceeds RSS, and smaps_rollup takes milliseconds per large process: it is read only
  // when the sum of RSS says the server might be too large.
  std::vector<util::ProcessInfo> members;
  std::uint64_t rss = 0;
  for (const auto& process : util::snapshot_processes()) {
    if (process.session != server_.pid || process.state == 'Z') continue;
    members.push_back(process);
    rss += process.rss_bytes;
  }
  if (rss <= config_.max_server_rss_bytes) return;
  std::uint64_t size = 0;
  for (const auto& process : members)
    size += util::proportional_set_size(process.pid).value_or(process.rss_bytes);
  if (size <= config_.max_server_rss_bytes) return;
  // Outgrown: replace it; the cells it holds are retried once on the new one.
  replacing_ = true;
  util::kill_session(server_.pid);
}

void ForkServerRunner::count_zygote_event(const ServerZygote& event) {
  const auto& change = event.change;
  const auto seconds = event.seconds.value_or(0.0);
  if (change == "started") ++stats_.zygotes_started;
  if (change == "unusable") ++stats_.zygotes_unusable;
  if (change == "retired") ++stats_.zygotes_retired;
  if (change == "ready" || change == "unusable") stats_.zygote_import_seconds += seconds;
  if (change == "warmed") stats_.warm_up_seconds += seconds;
}

std::string ForkServerRunner::server_log_tail() const {
  return util::read_file_bounded(config_.log_dir / fmt::format("server-{}.stderr", generation_),
                                 4000)
      .value_or("");
}

std::optional<ProbeAnswer> ForkServerRunner::probe_once(const nlohmann::json& request,
                                                        std::chrono::seconds timeout) {
  if (server_.pid <= 0 || server_.dead) start_server();
  if (server_.pid < 0) {
    ProcessOutcome outcome;
    outcome.how = Termination::spawn_failed;
    outcome.spawn_error = server_.spawn_error;
    throw_probe_failure(config_.argv.at(0), outcome, "");
  }
  send({{"op", "probe"}, {"request", with_protocol(request)}});
  const auto reply = await_event("probe", timeout);
  if (!reply) return std::nullopt;
  std::uint64_t total = 0;
  limits_.enforce({server_.pid}, &total);  // the server's size once Triton and the kernels are in
  peak_tree_rss_ = std::max(peak_tree_rss_, total);
  return checked_probe_answer(std::get<ServerProbed>(*reply).result);
}

ProbeAnswer ForkServerRunner::probe(const nlohmann::json& request, std::chrono::seconds timeout) {
  for (int attempt = 1;; ++attempt) {
    if (auto answer = probe_once(request, timeout)) return std::move(*answer);
    const bool died = server_.dead;  // by itself, rather than stopped by us after the timeout
    if (!server_.dead) stop_server();
    const int status = server_.exit_status;
    // A server killed from outside while it probes (the OOM killer, a stray kill) is replaced
    // once, as one lost while it holds cells is; one that exits by itself (Triton missing: exit
    // 3) or does not answer in time has given its answer.
    if (died && WIFSIGNALED(status) && attempt == 1) continue;
    ProcessOutcome outcome;
    outcome.how = WIFSIGNALED(status) ? Termination::signaled : Termination::exited;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw_probe_failure(config_.argv.at(0), outcome, server_log_tail());
  }
}

void ForkServerRunner::start(Id id, const ProcessSpec& spec) {
  InFlight cell;
  cell.spec = spec;
  enqueue(id, std::move(cell));
}

void ForkServerRunner::enqueue(Id id, InFlight cell) {
  if (server_.pid <= 0) start_server();
  if (cell.spec.compiles) ensure_warm();
  cell.requested = Clock::now();
  cell.entry.started = cell.requested;
  in_flight_.insert_or_assign(id, std::move(cell));
  queue_.push_back(id);
  dispatch();  // a dead server: the next wait() recovers or reports the cell as lost
  if (warm_early_ && !server_.warm_sent && !server_.dead) send_warm();
}

std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> ForkServerRunner::wait(
    std::chrono::milliseconds max_wait) {
  std::vector<std::pair<Id, ProcessOutcome>> ended = std::move(pending_);
  pending_.clear();
  const auto until = Clock::now() + max_wait;
  while (true) {
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    pump(std::max(std::chrono::milliseconds(0), std::min(config_.sample_period, remaining)), ended);
    advance_batches(ended);  // before the limits are enforced: a cell begun has its own
    reap(ended);
    if (server_.dead && !in_flight_.empty()) on_server_lost(ended);
    dispatch();  // a suspect's trial ended, or the server went idle for the next one

    // /proc is sampled when a limit could have been reached, not once per event: events come
    // much faster.
    if (!limits_.sample_due(Clock::now())) {
      if (!ended.empty() || in_flight_.empty() || Clock::now() >= until) return ended;
      continue;
    }
    std::uint64_t total = 0;
    const std::vector<pid_t> server_session =
        server_.dead ? std::vector<pid_t>{} : std::vector<pid_t>{server_.pid};
    for (const auto& [pid, verdict] : limits_.enforce(server_session, &total)) {
      // The server reaps the killed child and reports it; the verdict decides how it reads.
      const auto at = by_pid_.find(pid);
      if (at == by_pid_.end()) continue;
      auto& cell = in_flight_.at(at->second);
      cell.verdict = verdict;
      cell.entry = limits_.take(pid);
    }
    peak_tree_rss_ = std::max(peak_tree_rss_, total);
    check_server_size();
    if (!ended.empty() || in_flight_.empty() || Clock::now() >= until) return ended;
  }
}

std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> ForkServerRunner::cancel_all() {
  std::vector<std::pair<Id, ProcessOutcome>> ended = std::move(pending_);
  pending_.clear();
  for (auto& [id, cell] : in_flight_) {
    SessionLimits::Entry entry = cell.entry;
    if (cell.pid > 0) {
      util::kill_session(cell.pid);
      if (limits_.find(cell.pid)) entry = limits_.take(cell.pid);
    }
    const auto cancelled =
        finish_session(cell.pid > 0 ? cell.pid : 0, entry, Termination::cancelled, SIGKILL);
    if (cell.log == nullptr) {
      ended.emplace_back(id, cancelled);
      continue;
    }
    for (const auto& member : cell.members)  // what it finished has been reported
      if (!member.done) ended.emplace_back(member.id, cancelled);
  }
  in_flight_.clear();
  by_pid_.clear();
  queue_.clear();
  stop_server();
  util::kill_strays(util::snapshot_processes(), {});  // daemons that left their cell's session
  int status = 0;
  while (::waitpid(-1, &status, WNOHANG) > 0) {
  }
  return ended;
}

}  // namespace portcheck
