// Tests of the real Supervisor: it spawns /bin/sh and python3 children, each in its own session,
// and must leave no process of those sessions behind.
#include "src/run/supervisor.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "util/fs.hpp"
#include "util/proc.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using portcheck::ProcessOutcome;
using portcheck::ProcessRunner;
using portcheck::ProcessSpec;
using portcheck::Supervisor;
using portcheck::Termination;

namespace {

using Ended = std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>>;

const char* name_of(Termination how) {
  switch (how) {
    case Termination::exited:
      return "exited";
    case Termination::signaled:
      return "signaled";
    case Termination::timed_out:
      return "timed_out";
    case Termination::out_of_memory:
      return "out_of_memory";
    case Termination::cancelled:
      return "cancelled";
    case Termination::worker_lost:
      return "worker_lost";
    case Termination::killed_its_worker:
      return "killed_its_worker";
    case Termination::killed_its_parent:
      return "killed_its_parent";
    case Termination::spawn_failed:
      return "spawn_failed";
    case Termination::unfinished:
      return "unfinished";
    case Termination::returned:
      return "returned";
  }
  return "?";
}

std::string describe(const ProcessOutcome& o) {
  return std::string(name_of(o.how)) + " exit=" + std::to_string(o.exit_code) +
         " signal=" + std::to_string(o.signal) + " wall=" + std::to_string(o.wall_seconds) +
         " error='" + o.spawn_error + "'";
}

// The state of `pid` in /proc: nullopt when it is gone.
std::optional<util::ProcessInfo> find_process(pid_t pid) {
  for (const auto& p : util::snapshot_processes())
    if (p.pid == pid) return p;
  return std::nullopt;
}

bool is_live(pid_t pid) {
  const auto p = find_process(pid);
  return p.has_value() && p->state != 'Z';
}

std::vector<util::ProcessInfo> live_session_members(pid_t sid) {
  std::vector<util::ProcessInfo> out;
  for (const auto& p : util::session_members(util::snapshot_processes(), sid))
    if (p.state != 'Z') out.push_back(p);
  return out;
}

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("PATH");
    env_ = {"PATH=" + std::string(path && *path ? path : "/usr/local/bin:/usr/bin:/bin"),
            "PORTCHECK_UNIT=1"};
  }

  // Whatever a test did, no live process may remain in any session that a child led. This runs
  // before the fixture's Supervisor is destroyed, so its destructor's cancel_all cannot hide a
  // leak.
  void TearDown() override {
    for (const pid_t sid : sessions_) {
      const auto left = live_session_members(sid);
      EXPECT_TRUE(left.empty()) << left.size() << " live process(es) left in session " << sid
                                << ", first pid " << (left.empty() ? 0 : left.front().pid);
    }
    for (const pid_t pid : grandchildren_) EXPECT_FALSE(is_live(pid)) << "grandchild " << pid;
  }

  ProcessSpec shell(const std::string& name, const std::string& script,
                    std::chrono::milliseconds timeout = 0ms, std::uint64_t max_rss = 0) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = env_;
    spec.cwd = dir_.path();
    spec.stdout_path = dir_.path() / (name + ".out");
    spec.stderr_path = dir_.path() / (name + ".err");
    spec.timeout = timeout;
    spec.max_rss_bytes = max_rss;
    return spec;
  }

  fs::path file(const std::string& name) const { return dir_.path() / name; }

  // Reads a pid that a child wrote (with a trailing newline, so a complete write is recognisable).
  std::optional<pid_t> read_pid(const std::string& name) const {
    std::ifstream in(file(name));
    std::string text;
    if (!std::getline(in, text) || in.eof()) return std::nullopt;  // not (fully) written yet
    try {
      return static_cast<pid_t>(std::stoi(text));
    } catch (...) {
      return std::nullopt;
    }
  }

  // Calls wait() until `n` outcomes arrived or `limit` passed.
  Ended wait_for(std::size_t n, std::chrono::milliseconds limit = 5000ms) {
    Ended all;
    const auto until = std::chrono::steady_clock::now() + limit;
    while (all.size() < n && std::chrono::steady_clock::now() < until) {
      for (auto& e : sup_.wait(50ms)) all.push_back(std::move(e));
    }
    return all;
  }

  // Keeps the supervisor turning (so limits are enforced) until the child wrote `name`.
  pid_t wait_for_pid_file(const std::string& name, Ended& ended_meanwhile,
                          std::chrono::milliseconds limit = 3000ms) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (const auto pid = read_pid(name)) return *pid;
      for (auto& e : sup_.wait(10ms)) ended_meanwhile.push_back(std::move(e));
    }
    ADD_FAILURE() << "the child never wrote " << name;
    return 0;
  }

  void remember_session(pid_t sid) {
    if (sid > 0) sessions_.insert(sid);
  }
  void remember_grandchild(pid_t pid) {
    if (pid > 0) grandchildren_.insert(pid);
  }

  util::TempDir dir_{"portcheck-supervisor-test"};
  std::vector<std::string> env_;
  std::set<pid_t> sessions_;
  std::set<pid_t> grandchildren_;
  Supervisor sup_{5ms};
};

TEST_F(SupervisorTest, NormalExitReportsCodeAndCapturesOutput) {
  sup_.start(7, shell("normal",
                      "echo $$ > sid; echo to-stdout; echo to-stderr >&2; "
                      "echo \"cwd=$(pwd) var=$PORTCHECK_UNIT home=${HOME:-unset}\"; exit 3"));
  EXPECT_EQ(sup_.running(), 1u);
  const auto ended = wait_for(1);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].first, 7u);
  const ProcessOutcome& o = ended[0].second;
  EXPECT_EQ(o.how, Termination::exited) << describe(o);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.signal, 0);
  EXPECT_GT(o.wall_seconds, 0.0);
  EXPECT_LT(o.wall_seconds, 3.0);
  EXPECT_TRUE(o.spawn_error.empty());
  EXPECT_EQ(sup_.running(), 0u);

  // The environment is exactly the one given (HOME is not inherited); cwd is applied.
  EXPECT_EQ(util::read_file(file("normal.out")),
            "to-stdout\ncwd=" + fs::canonical(dir_.path()).string() + " var=1 home=unset\n");
  EXPECT_EQ(util::read_file(file("normal.err")), "to-stderr\n");
  EXPECT_TRUE(sup_.wait(0ms).empty()) << "an outcome must be reported only once";
}

TEST_F(SupervisorTest, ZeroExitAndOutputFilesAreTruncated) {
  std::ofstream(file("zero.out")) << "stale contents that must disappear\n";
  sup_.start(1, shell("zero", "echo $$ > sid; printf fresh"));
  const auto ended = wait_for(1);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::exited) << describe(ended[0].second);
  EXPECT_EQ(ended[0].second.exit_code, 0);
  EXPECT_EQ(util::read_file(file("zero.out")), "fresh");
  EXPECT_EQ(util::read_file(file("zero.err")), "");
}

TEST_F(SupervisorTest, SeveralChildrenAreReportedByTheirIds) {
  for (ProcessRunner::Id id = 1; id <= 4; ++id) {
    const std::string n = std::to_string(id);
    sup_.start(id, shell("c" + n, "echo $$ > sid" + n + "; sleep 0.0" + n + "; exit " + n));
  }
  EXPECT_EQ(sup_.running(), 4u);
  const auto ended = wait_for(4);
  for (int i = 1; i <= 4; ++i) remember_session(read_pid("sid" + std::to_string(i)).value_or(0));
  ASSERT_EQ(ended.size(), 4u);
  std::map<ProcessRunner::Id, int> codes;
  for (const auto& [id, o] : ended) {
    EXPECT_EQ(o.how, Termination::exited) << describe(o);
    codes[id] = o.exit_code;
  }
  EXPECT_EQ(codes, (std::map<ProcessRunner::Id, int>{{1, 1}, {2, 2}, {3, 3}, {4, 4}}));
  EXPECT_EQ(sup_.running(), 0u);
}

TEST_F(SupervisorTest, EachChildLeadsItsOwnSession) {
  sup_.start(1, shell("s", "echo $$ > sid; sleep 1000 & echo $! > gc; wait", 2000ms));
  Ended early;
  const pid_t sid = wait_for_pid_file("sid", early);
  const pid_t gc = wait_for_pid_file("gc", early);
  remember_session(sid);
  remember_grandchild(gc);
  ASSERT_TRUE(early.empty()) << describe(early.front().second);
  EXPECT_NE(sid, ::getsid(0));
  const auto info = find_process(gc);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->session, sid) << "the grandchild must be in the child's session";
  const auto leader = find_process(sid);
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->session, sid) << "the child must be a session leader";
  EXPECT_EQ(leader->ppid, ::getpid());
  const auto cancelled = sup_.cancel_all();
  ASSERT_EQ(cancelled.size(), 1u);
}

TEST_F(SupervisorTest, TimeoutKillsChildAndGrandchild) {
  const auto started = std::chrono::steady_clock::now();
  sup_.start(5, shell("slow", "sleep 1000 & echo $! > gc; echo $$ > sid; wait; echo never", 600ms));
  Ended ended;
  const pid_t gc = wait_for_pid_file("gc", ended);
  const pid_t sid = wait_for_pid_file("sid", ended);
  remember_grandchild(gc);
  remember_session(sid);
  ASSERT_TRUE(ended.empty()) << "ended before the timeout: " << describe(ended.front().second);
  ASSERT_TRUE(is_live(gc)) << "the grandchild should be running before the timeout";

  for (auto& e : wait_for(1, 3000ms)) ended.push_back(std::move(e));
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].first, 5u);
  const ProcessOutcome& o = ended[0].second;
  EXPECT_EQ(o.how, Termination::timed_out) << describe(o);
  EXPECT_EQ(o.signal, SIGKILL);
  EXPECT_GE(o.wall_seconds, 0.6);
  EXPECT_LT(o.wall_seconds, 2.0);
  EXPECT_LT(elapsed, 2.5);
  EXPECT_EQ(sup_.running(), 0u);
  EXPECT_FALSE(is_live(gc)) << "grandchild " << gc << " survived the timeout";
  EXPECT_FALSE(is_live(sid));
  EXPECT_TRUE(live_session_members(sid).empty());
  EXPECT_EQ(util::read_file(file("slow.out")), "");
}

// At the time limit, whether the session was waiting (a lock held since a fork) or computing:
// only the first may be a fork hazard's (src/run/stall.hpp). The computing one's work is done by
// a grandchild while the leader waits for it, as a cell waits for ptxas.
TEST_F(SupervisorTest, ATimeoutWhileWaitingHasStalledAndOneWhileComputingHasNot) {
  sup_.start(1, shell("waits", "echo $$ > sid; sleep 1000", 2000ms));
  sup_.start(2, shell("computes", "echo $$ > sid2; sh -c 'while :; do :; done' & wait", 2000ms));
  Ended ended;
  remember_session(wait_for_pid_file("sid", ended));
  remember_session(wait_for_pid_file("sid2", ended));
  for (auto& e : wait_for(2, 5000ms)) ended.push_back(std::move(e));
  ASSERT_EQ(ended.size(), 2u);
  std::map<ProcessRunner::Id, ProcessOutcome> by_id(ended.begin(), ended.end());
  EXPECT_EQ(by_id[1].how, Termination::timed_out) << describe(by_id[1]);
  EXPECT_TRUE(by_id[1].stalled);
  EXPECT_EQ(by_id[2].how, Termination::timed_out) << describe(by_id[2]);
  EXPECT_FALSE(by_id[2].stalled);
}

TEST_F(SupervisorTest, TimeoutOfZeroMeansNoLimit) {
  sup_.start(1, shell("nolimit", "echo $$ > sid; sleep 0.3; exit 4", 0ms));
  const auto ended = wait_for(1);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::exited) << describe(ended[0].second);
  EXPECT_EQ(ended[0].second.exit_code, 4);
}

TEST_F(SupervisorTest, MemoryLimitKillsAllocatingGrandchild) {
  // The shell does not exec python (a command follows it), so the allocation is a grandchild's.
  const std::string script =
      "echo $$ > sid; python3 -c 'import os, time\n"
      "open(\"py\", \"w\").write(str(os.getpid()) + \"\\n\")\n"
      "b = b\"x\" * (400 << 20)\n"
      "time.sleep(30)'; echo after-python";
  const auto started = std::chrono::steady_clock::now();
  sup_.start(9, shell("mem", script, 10000ms, 200ULL << 20));
  Ended ended;
  const pid_t sid = wait_for_pid_file("sid", ended);
  remember_session(sid);
  const auto until = started + 5s;
  while (ended.empty() && std::chrono::steady_clock::now() < until) {
    for (auto& e : sup_.wait(50ms)) ended.push_back(std::move(e));
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto py = read_pid("py");
  if (py) remember_grandchild(*py);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].first, 9u);
  const ProcessOutcome& o = ended[0].second;
  EXPECT_EQ(o.how, Termination::out_of_memory) << describe(o);
  EXPECT_EQ(o.signal, SIGKILL);
  EXPECT_GT(o.peak_rss_bytes, 200ULL << 20);
  EXPECT_LT(o.wall_seconds, 3.0) << "the limit should act within a few samples";
  EXPECT_LT(elapsed, 3.5);
  ASSERT_TRUE(py.has_value()) << "python never started";
  EXPECT_NE(*py, sid) << "python should be a grandchild, not the session leader";
  EXPECT_FALSE(is_live(*py));
  EXPECT_TRUE(live_session_members(sid).empty());
  EXPECT_EQ(util::read_file(file("mem.out")), "") << "the shell must not outlive python";
}

TEST_F(SupervisorTest, SmallProcessUnderTheMemoryLimitExitsNormally) {
  sup_.start(1, shell("small", "echo $$ > sid; sleep 0.2; exit 0", 0ms, 200ULL << 20));
  const auto ended = wait_for(1);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::exited) << describe(ended[0].second);
  EXPECT_GT(ended[0].second.peak_rss_bytes, 0u) << "the session's RSS should have been sampled";
  EXPECT_LT(ended[0].second.peak_rss_bytes, 200ULL << 20);
}

// A peak between two samples: the kernel's high-water mark of the largest process (here a
// grandchild the shell waited for) is the cell's peak, and over the limit it is out of memory
// though the process ended by itself before a sample could see it.
TEST_F(SupervisorTest, PeakBetweenSamplesIsCountedAndOverTheLimitIsOutOfMemory) {
  Supervisor rarely{1000ms};  // reaps and samples once a second
  const std::string script = "python3 -c 'b = b\"x\" * (300 << 20)'; echo $$ > sid";
  rarely.start(1, shell("peak", script));
  rarely.start(2, shell("over", script, 0ms, 250ULL << 20));
  Ended ended;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (ended.size() < 2 && std::chrono::steady_clock::now() < until)
    for (auto& e : rarely.wait(100ms)) ended.push_back(std::move(e));
  ASSERT_EQ(ended.size(), 2u);
  std::sort(ended.begin(), ended.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  EXPECT_EQ(ended[0].second.how, Termination::exited) << describe(ended[0].second);
  EXPECT_GE(ended[0].second.peak_rss_bytes, 300ULL << 20);
  EXPECT_EQ(ended[1].second.how, Termination::out_of_memory) << describe(ended[1].second);
}

TEST_F(SupervisorTest, SegfaultIsReportedAsSignaled) {
  sup_.start(3, shell("segv", "echo $$ > sid; ulimit -c 0; kill -SEGV $$"));
  const auto ended = wait_for(1);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].first, 3u);
  EXPECT_EQ(ended[0].second.how, Termination::signaled) << describe(ended[0].second);
  EXPECT_EQ(ended[0].second.signal, SIGSEGV);
}

TEST_F(SupervisorTest, PythonSegfaultAsDirectChildIsReportedAsSignaled) {
  ProcessSpec spec = shell("pysegv", "");
  spec.argv = {"python3", "-c",
               "import os, resource, signal\n"
               "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
               "open('sid', 'w').write(str(os.getpid()) + '\\n')\n"
               "os.kill(os.getpid(), signal.SIGSEGV)"};
  sup_.start(4, spec);
  const auto ended = wait_for(1);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::signaled) << describe(ended[0].second);
  EXPECT_EQ(ended[0].second.signal, SIGSEGV);
}

// The worker of --isolation process marks the progress file around its cell's child
// (src/run/cell_parent.hpp): dead of a signal between the marks, it was killed by that child;
// after the second mark, the signal is the child's own, passed on.
TEST_F(SupervisorTest, WorkerKilledByItsCellsChildIsKilledItsParent) {
  const std::map<std::string, std::pair<std::string, Termination>> cases = {
      {"killed", {"printf 'stage import\\ncell-parent forked\\n'", Termination::killed_its_parent}},
      {"passed_on",
       {"printf 'cell-parent forked\\ncell-parent child-ended\\n'", Termination::signaled}},
      {"unmarked", {"true", Termination::signaled}},
  };
  ProcessRunner::Id id = 0;
  std::map<ProcessRunner::Id, std::string> names;
  for (const auto& [name, marks] : cases) {
    ProcessSpec spec = shell(name, "echo $$ > " + name + ".sid; " + marks.first + " > " + name +
                                       ".progress; kill -KILL $$");
    spec.progress_path = file(name + ".progress");
    names[id] = name;
    sup_.start(id++, spec);
  }
  const auto ended = wait_for(cases.size());
  ASSERT_EQ(ended.size(), cases.size());
  for (const auto& [ended_id, outcome] : ended) {
    const auto& name = names.at(ended_id);
    remember_session(read_pid(name + ".sid").value_or(0));
    EXPECT_EQ(outcome.how, cases.at(name).second) << name << ": " << describe(outcome);
    EXPECT_EQ(outcome.signal, SIGKILL) << name;
  }
}

TEST_F(SupervisorTest, GrandchildOutlivingItsParentIsKilledOnExit) {
  sup_.start(2, shell("orphan", "sleep 1000 & echo $! > gc; echo $$ > sid; exit 0"));
  const auto ended = wait_for(1);
  const pid_t gc = read_pid("gc").value_or(0);
  const pid_t sid = read_pid("sid").value_or(0);
  remember_grandchild(gc);
  remember_session(sid);
  ASSERT_GT(gc, 0);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::exited) << describe(ended[0].second);
  EXPECT_EQ(ended[0].second.exit_code, 0);
  // Immediately after wait() reported the exit: nothing of the session is alive.
  EXPECT_FALSE(is_live(gc)) << "orphaned grandchild " << gc << " still runs";
  EXPECT_TRUE(live_session_members(sid).empty());
  // And it was re-parented to us (subreaper) and reaped, not left as a zombie of ours.
  const auto info = find_process(gc);
  EXPECT_FALSE(info.has_value()) << "grandchild left as a zombie, state " << info->state << " ppid "
                                 << info->ppid;
}

// A daemon that left its cell's session (setsid) is out of reach of kill_session; as our
// subreaper child it is still found, and killed, while the run goes on.
TEST_F(SupervisorTest, DaemonThatLeftItsSessionIsKilled) {
  sup_.start(3, shell("daemon",
                      "setsid sh -c 'echo $$ > d; exec sleep 1000' & "
                      "while [ ! -s d ]; do sleep 0.01; done; exit 0"));
  Ended ended;
  const pid_t daemon = wait_for_pid_file("d", ended);
  remember_grandchild(daemon);
  ASSERT_GT(daemon, 0);
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (is_live(daemon) && std::chrono::steady_clock::now() < until) sup_.wait(10ms);
  EXPECT_FALSE(is_live(daemon)) << "daemon " << daemon << " outlived its cell";
}

TEST(DeathWatch, KillsMarkedProcessesAndRemovesLitterWhenItsOwnerIsKilled) {
  util::TempDir dir("portcheck-death-watch-test");
  const auto litter = dir.path() / "run";
  fs::create_directories(litter);
  const std::string marker = "PORTCHECK_DEATH_WATCH_TEST=" + std::to_string(::getpid());
  const pid_t owner = ::fork();
  if (owner == 0) {
    // The owner: watch, start a marked sleeper in a session of its own, then wait to be killed.
    const util::DeathWatch watch(marker, {litter});
    if (::fork() == 0) {
      ::setsid();
      ::execle("/bin/sleep", "sleep", "1000", nullptr,
               std::vector<const char*>{marker.c_str(), nullptr}.data());
      ::_exit(127);
    }
    ::pause();
    ::_exit(0);
  }
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (util::processes_marked(marker).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(util::processes_marked(marker).empty()) << "the marked sleeper never started";
  ::kill(owner, SIGKILL);
  int status = 0;
  ::waitpid(owner, &status, 0);
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while ((!util::processes_marked(marker).empty() || fs::exists(litter)) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(util::processes_marked(marker).empty());
  EXPECT_FALSE(fs::exists(litter));
}

TEST_F(SupervisorTest, CancelAllKillsEverythingAndReportsCancelled) {
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    sup_.start(
        static_cast<ProcessRunner::Id>(10 + i),
        shell("cancel" + n, "sleep 1000 & echo $! > gc" + n + "; echo $$ > sid" + n + "; wait"));
  }
  Ended early;
  std::vector<pid_t> gcs;
  std::vector<pid_t> sids;
  for (int i = 1; i <= 3; ++i) {
    gcs.push_back(wait_for_pid_file("gc" + std::to_string(i), early));
    sids.push_back(wait_for_pid_file("sid" + std::to_string(i), early));
    remember_grandchild(gcs.back());
    remember_session(sids.back());
  }
  ASSERT_TRUE(early.empty());
  for (const pid_t gc : gcs) ASSERT_TRUE(is_live(gc));
  ASSERT_EQ(sup_.running(), 3u);

  const auto cancelled = sup_.cancel_all();
  ASSERT_EQ(cancelled.size(), 3u);
  std::set<ProcessRunner::Id> ids;
  for (const auto& [id, o] : cancelled) {
    ids.insert(id);
    EXPECT_EQ(o.how, Termination::cancelled) << describe(o);
    EXPECT_EQ(o.signal, SIGKILL);
  }
  EXPECT_EQ(ids, (std::set<ProcessRunner::Id>{11, 12, 13}));
  EXPECT_EQ(sup_.running(), 0u);
  for (const pid_t gc : gcs) EXPECT_FALSE(find_process(gc).has_value()) << "grandchild " << gc;
  for (const pid_t sid : sids) EXPECT_FALSE(find_process(sid).has_value()) << "leader " << sid;
  EXPECT_TRUE(sup_.wait(0ms).empty());
  EXPECT_TRUE(sup_.cancel_all().empty());
}

TEST_F(SupervisorTest, CancelAllAlsoReportsPendingSpawnFailures) {
  ProcessSpec bad = shell("bad", "");
  bad.argv = {"/nonexistent/portcheck-no-such-program"};
  sup_.start(1, bad);
  const auto cancelled = sup_.cancel_all();
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0].first, 1u);
  EXPECT_EQ(cancelled[0].second.how, Termination::spawn_failed);
}

TEST_F(SupervisorTest, NonexistentProgramIsSpawnFailed) {
  ProcessSpec spec = shell("missing", "");
  spec.argv = {"/nonexistent/portcheck-no-such-program", "--flag"};
  sup_.start(6, spec);
  EXPECT_EQ(sup_.running(), 0u);
  const auto ended = sup_.wait(0ms);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].first, 6u);
  const ProcessOutcome& o = ended[0].second;
  EXPECT_EQ(o.how, Termination::spawn_failed) << describe(o);
  EXPECT_NE(o.spawn_error.find("/nonexistent/portcheck-no-such-program"), std::string::npos)
      << o.spawn_error;
  EXPECT_NE(o.spawn_error.find("No such file"), std::string::npos) << o.spawn_error;
  EXPECT_TRUE(sup_.wait(0ms).empty()) << "reported only once";
}

TEST_F(SupervisorTest, ProgramNotOnPathIsSpawnFailed) {
  ProcessSpec spec = shell("notonpath", "");
  spec.argv = {"portcheck-no-such-program-on-path"};
  sup_.start(2, spec);
  const auto ended = sup_.wait(0ms);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::spawn_failed) << describe(ended[0].second);
  EXPECT_NE(ended[0].second.spawn_error.find("portcheck-no-such-program-on-path"),
            std::string::npos);
}

TEST_F(SupervisorTest, UnwritableOutputPathIsSpawnFailed) {
  ProcessSpec spec = shell("x", "echo hi");
  spec.stdout_path = dir_.path() / "no-such-dir" / "out";
  sup_.start(3, spec);
  EXPECT_EQ(sup_.running(), 0u);
  const auto ended = sup_.wait(0ms);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second.how, Termination::spawn_failed) << describe(ended[0].second);
  EXPECT_FALSE(ended[0].second.spawn_error.empty());
}

TEST_F(SupervisorTest, SpawnFailureDoesNotDisturbRunningChildren) {
  sup_.start(1, shell("ok", "echo $$ > sid; sleep 0.2; exit 5"));
  ProcessSpec bad = shell("bad", "");
  bad.argv = {"/nonexistent/portcheck-no-such-program"};
  sup_.start(2, bad);
  EXPECT_EQ(sup_.running(), 1u);
  const auto ended = wait_for(2);
  remember_session(read_pid("sid").value_or(0));
  ASSERT_EQ(ended.size(), 2u);
  // The failure was known first, so it is reported first.
  EXPECT_EQ(ended[0].first, 2u);
  EXPECT_EQ(ended[0].second.how, Termination::spawn_failed);
  EXPECT_EQ(ended[1].first, 1u);
  EXPECT_EQ(ended[1].second.how, Termination::exited);
  EXPECT_EQ(ended[1].second.exit_code, 5);
}

TEST_F(SupervisorTest, WaitReturnsAfterMaxWaitWhenNothingEnds) {
  sup_.start(1, shell("idle", "echo $$ > sid; sleep 1000 & wait"));
  const auto before = std::chrono::steady_clock::now();
  const auto ended = sup_.wait(200ms);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  EXPECT_TRUE(ended.empty());
  EXPECT_GE(waited, 0.19);
  EXPECT_LT(waited, 1.5);
  Ended early;
  remember_session(wait_for_pid_file("sid", early));
  EXPECT_TRUE(early.empty());
  EXPECT_EQ(sup_.cancel_all().size(), 1u);
}

TEST_F(SupervisorTest, WaitWithNoChildrenReturnsImmediately) {
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(sup_.wait(2000ms).empty());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count(), 0.5);
}

TEST(SupervisorDestructor, KillsWhatIsStillRunning) {
  util::TempDir dir("portcheck-supervisor-test");
  pid_t gc = 0;
  pid_t sid = 0;
  {
    Supervisor sup(5ms);
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "sleep 1000 & echo $! > gc; echo $$ > sid; wait"};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cwd = dir.path();
    spec.stdout_path = dir.path() / "out";
    spec.stderr_path = dir.path() / "err";
    sup.start(1, spec);
    const auto until = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream g(dir.path() / "gc"), s(dir.path() / "sid");
      std::string a, b;
      if (std::getline(g, a) && !g.eof() && std::getline(s, b) && !s.eof()) {
        gc = std::stoi(a);
        sid = std::stoi(b);
        break;
      }
      ASSERT_TRUE(sup.wait(10ms).empty());
    }
    ASSERT_GT(gc, 0);
    ASSERT_TRUE(is_live(gc));
  }
  EXPECT_FALSE(is_live(gc));
  EXPECT_FALSE(is_live(sid));
  EXPECT_TRUE(live_session_members(sid).empty());
}

}  // namespace

// The sampling schedule alone, on sessions that do not exist (enforce() reads 0 bytes for them).
TEST(SessionLimitsSampling, SessionsFarFromTheirLimitsAreSampledLessOften) {
  using Clock = portcheck::SessionLimits::Clock;
  portcheck::SessionLimits limits(20ms, 250ms);
  ProcessSpec roomy;
  roomy.max_rss_bytes = 8ULL << 30;
  const auto start = Clock::now();
  limits.watch(999999, 1, roomy, start, start);
  (void)limits.enforce();
  const auto sampled = Clock::now();
  EXPECT_FALSE(limits.sample_due(sampled + 19ms)) << "never sooner than the shortest period";
  EXPECT_FALSE(limits.sample_due(sampled + 200ms)) << "8 GiB of headroom cannot go in 200 ms";
  EXPECT_TRUE(limits.sample_due(sampled + 251ms)) << "always by the longest period";

  ProcessSpec tight;
  tight.max_rss_bytes = 64ULL << 20;  // 4 GiB/s covers it in about 16 ms
  limits.watch(999998, 2, tight, sampled, sampled);
  EXPECT_TRUE(limits.sample_due(sampled + 1ms)) << "a new session this near its limit: at once";
  (void)limits.enforce();
  const auto again = Clock::now();
  EXPECT_FALSE(limits.sample_due(again + 10ms));
  EXPECT_TRUE(limits.sample_due(again + 21ms)) << "a session near its limit is sampled often";

  portcheck::SessionLimits deadlines(20ms, 250ms);
  ProcessSpec short_lived;
  short_lived.timeout = 100ms;
  deadlines.watch(999997, 3, short_lived, start, start);
  (void)deadlines.enforce();
  EXPECT_FALSE(deadlines.sample_due(start + 90ms));
  EXPECT_TRUE(deadlines.sample_due(start + 101ms)) << "a passed deadline is due at once";

  // A cell handed to a fork server 5 s before it was forked (its zygote's import): its time limit
  // counts from the fork, its wall time from the hand-over.
  portcheck::SessionLimits forked(20ms, 250ms);
  forked.watch(999996, 4, short_lived, start - 5s, start);
  (void)forked.enforce();
  EXPECT_FALSE(forked.sample_due(start + 90ms)) << "the wait before the fork is not the cell's";
  EXPECT_TRUE(forked.sample_due(start + 101ms));
  EXPECT_EQ(forked.find(999996)->started, start - 5s);
}
