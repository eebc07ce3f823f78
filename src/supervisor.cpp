#include "src/supervisor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "util/proc.hpp"

namespace portcheck {
namespace {

// RAII for the posix_spawn helper objects.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawn_file_actions_init(&actions_);
    ::posix_spawnattr_init(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  posix_spawn_file_actions_t* actions() { return &actions_; }
  posix_spawnattr_t* attr() { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_{};
  posix_spawnattr_t attr_{};
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Supervisor::Supervisor(std::chrono::milliseconds sample_period) : sample_period_(sample_period) {
  util::become_subreaper();
}

Supervisor::~Supervisor() { cancel_all(); }

void Supervisor::start(Id id, const ProcessSpec& spec) {
  SpawnSetup setup;
  ::posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(setup.actions(), STDOUT_FILENO, spec.stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::posix_spawn_file_actions_addopen(setup.actions(), STDERR_FILENO, spec.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!spec.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(setup.actions(), spec.cwd.c_str());
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGCHLD);
  sigset_t none;
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(setup.attr(), &defaults);
  ::posix_spawnattr_setsigmask(setup.attr(), &none);
  ::posix_spawnattr_setflags(setup.attr(),
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  auto argv = c_strings(spec.argv);
  auto envp = c_strings(spec.env);
  pid_t pid = 0;
  const auto now = Clock::now();
  const int rc =
      ::posix_spawnp(&pid, argv[0], setup.actions(), setup.attr(), argv.data(), envp.data());
  if (rc != 0) {
    ProcessOutcome outcome;
    outcome.how = Termination::spawn_failed;
    outcome.spawn_error = fmt::format("cannot start {}: {}", spec.argv.at(0), std::strerror(rc));
    pending_.emplace_back(id, std::move(outcome));
    return;
  }
  Child child{id, now, spec.timeout.count() > 0 ? now + spec.timeout : Clock::time_point::max(),
              spec.max_rss_bytes};
  children_.emplace(pid, child);
}

ProcessOutcome Supervisor::finish(pid_t pid, const Child& child, Termination how, int status) {
  // Whatever the leader did, nothing of its session may outlive it.
  util::kill_session(pid);
  ProcessOutcome outcome;
  outcome.how = how;
  outcome.wall_seconds = std::chrono::duration<double>(Clock::now() - child.started).count();
  outcome.peak_rss_bytes = child.peak_rss_bytes;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  if (how == Termination::exited && WIFSIGNALED(status)) outcome.how = Termination::signaled;
  return outcome;
}

void Supervisor::reap(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    const auto it = children_.find(pid);
    if (it == children_.end()) continue;  // an orphaned grandchild handed to us as subreaper
    ended.emplace_back(it->second.id, finish(pid, it->second, Termination::exited, status));
    children_.erase(it);
  }
}

void Supervisor::enforce_limits(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  const auto now = Clock::now();
  std::unordered_map<pid_t, std::uint64_t> rss_by_session;
  bool sampled = false;
  for (auto it = children_.begin(); it != children_.end();) {
    const pid_t pid = it->first;
    Child& child = it->second;
    Termination verdict = Termination::exited;
    if (now >= child.deadline) {
      verdict = Termination::timed_out;
    } else {
      if (!sampled) {
        for (const auto& p : util::snapshot_processes()) rss_by_session[p.session] += p.rss_bytes;
        sampled = true;
      }
      const auto rss = rss_by_session[pid];
      child.peak_rss_bytes = std::max(child.peak_rss_bytes, rss);
      if (child.max_rss_bytes > 0 && rss > child.max_rss_bytes)
        verdict = Termination::out_of_memory;
    }
    if (verdict == Termination::exited) {
      ++it;
      continue;
    }
    util::kill_session(pid);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ended.emplace_back(child.id, finish(pid, child, verdict, status));
    it = children_.erase(it);
  }
}

std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> Supervisor::wait(
    std::chrono::milliseconds max_wait) {
  std::vector<std::pair<Id, ProcessOutcome>> ended = std::move(pending_);
  pending_.clear();
  const auto until = Clock::now() + max_wait;
  while (true) {
    reap(ended);
    enforce_limits(ended);
    if (!ended.empty() || children_.empty() || Clock::now() >= until) return ended;
    std::this_thread::sleep_for(std::min<Clock::duration>(sample_period_, until - Clock::now()));
  }
}

std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> Supervisor::cancel_all() {
  std::vector<std::pair<Id, ProcessOutcome>> ended = std::move(pending_);
  pending_.clear();
  for (const auto& [pid, child] : children_) util::kill_session(pid);
  for (const auto& [pid, child] : children_) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ended.emplace_back(child.id, finish(pid, child, Termination::cancelled, status));
  }
  children_.clear();
  // Collect grandchildren that were re-parented to us while their sessions were killed.
  int status = 0;
  while (::waitpid(-1, &status, WNOHANG) > 0) {
  }
  return ended;
}

}  // namespace portcheck
