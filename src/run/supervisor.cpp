#include "src/run/supervisor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "src/run/cell_parent.hpp"
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

void wait_for(pid_t pid, int* status) {
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

pid_t spawn_in_new_session(const ProcessSpec& spec,
                           const std::vector<std::pair<int, int>>& extra_fds, std::string* error) {
  SpawnSetup setup;
  ::posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(setup.actions(), STDOUT_FILENO, spec.stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::posix_spawn_file_actions_addopen(setup.actions(), STDERR_FILENO, spec.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (const auto& [child_fd, parent_fd] : extra_fds)
    ::posix_spawn_file_actions_adddup2(setup.actions(), parent_fd, child_fd);
  if (!spec.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(setup.actions(), spec.cwd.c_str());
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
  sigset_t none;
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(setup.attr(), &defaults);
  ::posix_spawnattr_setsigmask(setup.attr(), &none);
  ::posix_spawnattr_setflags(setup.attr(),
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  auto argv = c_strings(spec.argv);
  auto envp = c_strings(spec.env);
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, argv[0], setup.actions(), setup.attr(), argv.data(), envp.data());
  if (rc != 0) {
    if (error) *error = fmt::format("cannot start {}: {}", spec.argv.at(0), std::strerror(rc));
    return -1;
  }
  return pid;
}

void SessionLimits::watch(pid_t session, ProcessRunner::Id id, const ProcessSpec& spec,
                          Clock::time_point started, Clock::time_point born) {
  Entry entry;
  entry.id = id;
  entry.started = started;
  entry.deadline = spec.timeout.count() > 0 ? born + spec.timeout : Clock::time_point::max();
  entry.max_rss_bytes = spec.max_rss_bytes;
  entry.cpu = CpuWindow(born, spec.timeout);
  entries_[session] = entry;
}

void SessionLimits::rearm(pid_t session, ProcessRunner::Id id, const ProcessSpec& spec,
                          Clock::time_point began, Clock::duration spent) {
  const auto it = entries_.find(session);
  if (it == entries_.end()) return;
  auto& entry = it->second;
  entry.id = id;
  entry.started = began;
  entry.deadline =
      spec.timeout.count() > 0 ? began + spec.timeout - spent : Clock::time_point::max();
  entry.max_rss_bytes = spec.max_rss_bytes;
  // A forked cell's memory is its own from its birth; a cell run in the leader itself held what
  // the leader holds now.
  entry.peak_rss_bytes = entry.leader_forks_cells ? 0 : entry.last_rss_bytes;
  entry.cpu = entry.cpu.anew(began, spec.timeout);
  entry.stalled = false;
}

void SessionLimits::leader_forks_cells(pid_t session) {
  if (const auto it = entries_.find(session); it != entries_.end())
    it->second.leader_forks_cells = true;
}

const SessionLimits::Entry* SessionLimits::find(pid_t session) const {
  const auto it = entries_.find(session);
  return it == entries_.end() ? nullptr : &it->second;
}

SessionLimits::Entry SessionLimits::take(pid_t session) {
  const auto it = entries_.find(session);
  Entry entry = it->second;
  entries_.erase(it);
  return entry;
}

bool SessionLimits::sample_due(Clock::time_point now) const {
  // Faulting fresh pages in on one core runs at a few GiB/s; a session further from its limit
  // than this rate covers in `longest` cannot cross it before the next sample.
  constexpr double kFastestGrowthBytesPerSecond = 4.0 * (1ULL << 30);
  const auto headroom = [](const Entry& entry) {
    return entry.max_rss_bytes > entry.last_rss_bytes
               ? static_cast<double>(entry.max_rss_bytes - entry.last_rss_bytes)
               : 0.0;
  };
  const double shortest = std::chrono::duration<double>(shortest_).count();
  for (const auto& [session, entry] : entries_)
    if (!entry.sampled && entry.max_rss_bytes > 0 &&
        headroom(entry) <= shortest * kFastestGrowthBytesPerSecond)
      return true;
  if (now < last_sample_ + shortest_) return false;
  if (now >= last_sample_ + longest_) return true;
  const double since = std::chrono::duration<double>(now - last_sample_).count();
  for (const auto& [session, entry] : entries_) {
    if (now >= entry.deadline) return true;
    if (entry.max_rss_bytes > 0 && since * kFastestGrowthBytesPerSecond >= headroom(entry))
      return true;
  }
  return false;
}

std::vector<std::pair<pid_t, Termination>> SessionLimits::enforce(
    const std::vector<pid_t>& also_count, std::uint64_t* total_rss) {
  std::vector<std::pair<pid_t, Termination>> over;
  const auto now = Clock::now();
  last_sample_ = now;
  std::unordered_map<pid_t, std::uint64_t> rss_by_session;
  std::unordered_map<pid_t, std::uint64_t> leader_rss;  // of sessions with other processes too
  std::unordered_map<pid_t, std::uint64_t> cpu_by_session;
  const auto processes = util::snapshot_processes();
  for (const auto& p : processes) {
    rss_by_session[p.session] += p.rss_bytes;
    cpu_by_session[p.session] += p.cpu_ticks;
    if (p.pid == p.session) leader_rss[p.session] += p.rss_bytes;
  }
  std::set<pid_t> ours(also_count.begin(), also_count.end());
  for (const auto& [session, entry] : entries_) ours.insert(session);
  util::kill_strays(processes, ours);
  std::uint64_t total = 0;
  for (const pid_t s : also_count) {
    total += rss_by_session[s];
  }
  for (auto& [session, entry] : entries_) {
    auto rss = rss_by_session[session];
    total += rss;
    if (entry.leader_forks_cells && rss > leader_rss[session]) rss -= leader_rss[session];
    entry.peak_rss_bytes = std::max(entry.peak_rss_bytes, rss);
    entry.last_rss_bytes = rss;
    entry.sampled = true;
    entry.cpu.sample(now, cpu_by_session[session]);
    if (now >= entry.deadline) {
      entry.stalled = entry.cpu.stalled();
      over.emplace_back(session, Termination::timed_out);
    } else if (entry.max_rss_bytes > 0 && rss > entry.max_rss_bytes) {
      over.emplace_back(session, Termination::out_of_memory);
    }
  }
  for (const auto& [session, verdict] : over) util::kill_session(session);
  if (total_rss) *total_rss = total;
  return over;
}

ProcessOutcome finish_session(pid_t leader, const SessionLimits::Entry& entry, Termination how,
                              int wait_status, Sweep sweep) {
  // Whatever the leader did, nothing of its session may outlive it. A cell we stopped is killed
  // whole, now, whatever `sweep` says.
  if (sweep == Sweep::at_next_sample && how == Termination::exited)
    util::kill_group(leader);
  else
    util::kill_session(leader);
  ProcessOutcome outcome;
  outcome.how = how;
  outcome.wall_seconds =
      std::chrono::duration<double>(SessionLimits::Clock::now() - entry.started).count();
  outcome.peak_rss_bytes = entry.peak_rss_bytes;
  outcome.stalled = how == Termination::timed_out && entry.stalled;
  if (WIFEXITED(wait_status)) outcome.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) outcome.signal = WTERMSIG(wait_status);
  if (how == Termination::exited && WIFSIGNALED(wait_status)) outcome.how = Termination::signaled;
  // Over the limit between two samples and done before the next: over the limit all the same,
  // so that the verdict does not depend on when /proc was read.
  if (how == Termination::exited && entry.max_rss_bytes > 0 &&
      entry.peak_rss_bytes > entry.max_rss_bytes)
    outcome.how = Termination::out_of_memory;
  return outcome;
}

Supervisor::Supervisor(std::chrono::milliseconds sample_period)
    : sample_period_(sample_period), limits_(sample_period) {
  util::become_subreaper();
}

Supervisor::~Supervisor() { cancel_all(); }

void Supervisor::start(Id id, const ProcessSpec& spec) {
  const auto now = SessionLimits::Clock::now();
  std::string error;
  const pid_t pid = spawn_in_new_session(spec, {}, &error);
  if (pid < 0) {
    ProcessOutcome outcome;
    outcome.how = Termination::spawn_failed;
    outcome.spawn_error = error;
    pending_.emplace_back(id, std::move(outcome));
    return;
  }
  limits_.watch(pid, id, spec, now, now);
  if (!spec.progress_path.empty()) progress_[pid] = spec.progress_path;
}

void Supervisor::reap(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  while (true) {
    int status = 0;
    rusage usage{};
    const pid_t pid = ::wait4(-1, &status, WNOHANG, &usage);
    if (pid <= 0) return;
    if (limits_.find(pid) == nullptr) continue;  // an orphaned grandchild handed to us as subreaper
    auto entry = limits_.take(pid);
    // The kernel's high-water mark of its largest process (KiB): exact where sampling is not.
    entry.peak_rss_bytes =
        std::max(entry.peak_rss_bytes, static_cast<std::uint64_t>(usage.ru_maxrss) * 1024);
    auto outcome = finish_session(pid, entry, Termination::exited, status);
    const auto progress = progress_.extract(pid);
    // A worker (never the user's code) dead of a signal nobody here sent: if its cell's child
    // killed it, that is the cell's crash, not the worker's.
    if (outcome.how == Termination::signaled && progress && killed_by_its_child(progress.mapped()))
      outcome.how = Termination::killed_its_parent;
    ended.emplace_back(entry.id, outcome);
  }
}

std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> Supervisor::wait(
    std::chrono::milliseconds max_wait) {
  std::vector<std::pair<Id, ProcessOutcome>> ended = std::move(pending_);
  pending_.clear();
  const auto until = SessionLimits::Clock::now() + max_wait;
  while (true) {
    reap(ended);
    std::uint64_t total = 0;
    std::vector<std::pair<pid_t, Termination>> over;
    if (limits_.sample_due(SessionLimits::Clock::now())) over = limits_.enforce({}, &total);
    for (const auto& [pid, verdict] : over) {
      int status = 0;
      wait_for(pid, &status);
      const auto entry = limits_.take(pid);
      progress_.erase(pid);
      ended.emplace_back(entry.id, finish_session(pid, entry, verdict, status));
    }
    peak_tree_rss_ = std::max(peak_tree_rss_, total);
    if (!ended.empty() || limits_.entries().empty() || SessionLimits::Clock::now() >= until)
      return ended;
    std::this_thread::sleep_for(std::min<SessionLimits::Clock::duration>(
        sample_period_, until - SessionLimits::Clock::now()));
  }
}

std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> Supervisor::cancel_all() {
  std::vector<std::pair<Id, ProcessOutcome>> ended = std::move(pending_);
  pending_.clear();
  for (const auto& [pid, entry] : limits_.entries()) util::kill_session(pid);
  while (!limits_.entries().empty()) {
    const pid_t pid = limits_.entries().begin()->first;
    int status = 0;
    wait_for(pid, &status);
    const auto entry = limits_.take(pid);
    progress_.erase(pid);
    ended.emplace_back(entry.id, finish_session(pid, entry, Termination::cancelled, status));
  }
  // Daemons that left their cell's session, then grandchildren re-parented to us meanwhile.
  util::kill_strays(util::snapshot_processes(), {});
  int status = 0;
  while (::waitpid(-1, &status, WNOHANG) > 0) {
  }
  return ended;
}

}  // namespace portcheck
