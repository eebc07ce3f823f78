// Tests of the real ForkServerRunner against a stand-in server (data/fake_fork_server.py) that
// speaks the same protocol without Triton: how the runner recovers when a cell kills the server.
#include "src/run/fork_server.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "util/fs.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using portcheck::ForkServerConfig;
using portcheck::ForkServerRunner;
using portcheck::ProcessOutcome;
using portcheck::ProcessRunner;
using portcheck::ProcessSpec;
using portcheck::Termination;

namespace {

class ForkServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("portcheck-fork-server-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ForkServerConfig config() const {
    ForkServerConfig c;
    c.argv = {"python3", std::string(PORTCHECK_TEST_DATA) + "/fake_fork_server.py"};
    c.env = {"PATH=" + std::string(std::getenv("PATH"))};
    c.cwd = dir_;
    c.log_dir = dir_;
    return c;
  }

  // One cell whose request file tells the fake server's child what to do.
  ProcessSpec cell(const std::string& name, const std::string& what) const {
    ProcessSpec spec;
    spec.request_path = dir_ / (name + ".request");
    std::ofstream(spec.request_path) << what << "\n";
    spec.result_path = dir_ / (name + ".result");
    spec.progress_path = dir_ / (name + ".progress");
    spec.stdout_path = dir_ / (name + ".stdout");
    spec.stderr_path = dir_ / (name + ".stderr");
    spec.timeout = 30s;
    return spec;
  }

  static std::map<ProcessRunner::Id, ProcessOutcome> run_all(ForkServerRunner& runner) {
    std::map<ProcessRunner::Id, ProcessOutcome> ended;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (runner.running() > 0 && std::chrono::steady_clock::now() < deadline)
      for (auto& [id, outcome] : runner.wait(200ms)) ended[id] = outcome;
    return ended;
  }

  fs::path dir_;
};

TEST_F(ForkServerTest, ACellThatKillsTheServerIsBlamedAloneAndItsNeighboursSucceed) {
  ForkServerRunner runner(config());
  runner.start(1, cell("healthy1", "ok"));
  runner.start(2, cell("killer", "kill-server"));
  runner.start(3, cell("healthy2", "ok"));
  auto ended = run_all(runner);
  ASSERT_EQ(ended.size(), 3U);
  EXPECT_EQ(ended[1].how, Termination::exited);
  EXPECT_EQ(ended[1].exit_code, 0);
  EXPECT_EQ(ended[3].how, Termination::exited);
  EXPECT_EQ(ended[3].exit_code, 0);
  EXPECT_EQ(ended[2].how, Termination::killed_its_worker);
  // At least the first server and the one the killer was retried on alone. How many more depends
  // on whether the healthy cells were still running at the first blow (then they are suspects,
  // retried alone too): timing, not behaviour (on a loaded machine both happen).
  EXPECT_GE(runner.stats().servers_started, 2);
}

TEST_F(ForkServerTest, SeveralKillersDoNotExhaustTheServerRestartLimit) {
  auto c = config();
  c.max_server_starts = 2;  // a culprit's kills do not count against it
  ForkServerRunner runner(c);
  for (ProcessRunner::Id id = 1; id <= 3; ++id)
    runner.start(id, cell("killer" + std::to_string(id), "kill-server"));
  runner.start(4, cell("healthy", "ok"));
  auto ended = run_all(runner);
  ASSERT_EQ(ended.size(), 4U);
  for (ProcessRunner::Id id = 1; id <= 3; ++id)
    EXPECT_EQ(ended[id].how, Termination::killed_its_worker) << id;
  EXPECT_EQ(ended[4].how, Termination::exited);
  EXPECT_EQ(ended[4].exit_code, 0);
}

TEST_F(ForkServerTest, CellsStartedWhileASuspectIsOnTrialWaitAndThenRun) {
  ForkServerRunner runner(config());
  runner.start(1, cell("killer", "kill-server"));
  runner.start(2, cell("healthy1", "ok"));
  std::map<ProcessRunner::Id, ProcessOutcome> ended;
  for (int i = 0; i < 10 && runner.stats().cells_retried == 0; ++i)
    for (auto& [id, outcome] : runner.wait(200ms)) ended[id] = outcome;
  runner.start(3, cell("late", "ok"));  // arrives during the trials
  for (auto& [id, outcome] : run_all(runner)) ended[id] = outcome;
  ASSERT_EQ(ended.size(), 3U);
  EXPECT_EQ(ended[1].how, Termination::killed_its_worker);
  EXPECT_EQ(ended[2].how, Termination::exited);
  EXPECT_EQ(ended[3].how, Termination::exited);
}

}  // namespace
