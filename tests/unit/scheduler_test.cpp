// Tests of the Scheduler against a scripted fake ProcessRunner: no processes are started.
#include "src/run/scheduler.hpp"
#include "src/run/eta.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/fake_runner.hpp"

namespace {

using portcheck::FakeRunner;
using portcheck::ProcessOutcome;
using portcheck::ProcessRunner;
using portcheck::Progress;
using portcheck::Scheduler;
using portcheck::Task;
using portcheck::Termination;
using Id = ProcessRunner::Id;

Task make_task(Id id, double expected_seconds) {
  Task t;
  t.id = id;
  t.expected_seconds = expected_seconds;
  t.spec.argv = {"task-" + std::to_string(id)};
  return t;
}

struct Recorder {
  std::vector<std::pair<Id, ProcessOutcome>> ended;
  std::vector<Progress> progress;

  Scheduler::OnEnded on_ended() {
    return [this](Id id, const ProcessOutcome& o) { ended.emplace_back(id, o); };
  }
  Scheduler::OnProgress on_progress() {
    return [this](const Progress& p) { progress.push_back(p); };
  }
  [[nodiscard]] std::map<Id, int> counts() const {
    std::map<Id, int> out;
    for (const auto& [id, o] : ended) ++out[id];
    return out;
  }
};

TEST(Scheduler, NeverRunsMoreThanJobsAtOnce) {
  FakeRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 12; ++id) {
    tasks.push_back(make_task(id, 1.0));
    runner.ticks[id] = 1 + static_cast<int>(id % 4);  // uneven durations
  }
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 3);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted, rec.on_progress()));
  EXPECT_EQ(runner.max_running, 3u) << "the limit should be reached but never exceeded";
  for (const auto& p : rec.progress) {
    EXPECT_LE(p.running, 3u);
    EXPECT_EQ(p.total, 12u);
  }
  EXPECT_EQ(rec.ended.size(), 12u);
}

TEST(Scheduler, RefillsSlotsAsSoonAsTasksEnd) {
  // One long task and many short ones with two jobs: the short ones must flow through the
  // second slot while the long one runs, instead of waiting for a whole "batch" to end.
  FakeRunner runner;
  std::vector<Task> tasks{make_task(1, 100.0)};
  runner.ticks[1] = 6;
  for (Id id = 2; id <= 6; ++id) tasks.push_back(make_task(id, 1.0));
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 2);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_EQ(runner.wait_calls, 6u) << "the long task bounds the whole run";
  ASSERT_EQ(rec.ended.size(), 6u);
  EXPECT_EQ(rec.ended.back().first, 1u);
}

TEST(Scheduler, StartsLongestExpectedFirst) {
  FakeRunner runner;
  std::vector<Task> tasks{make_task(1, 1.0), make_task(2, 5.0), make_task(3, 3.0),
                          make_task(4, 5.0), make_task(5, 0.0), make_task(6, 30.0)};
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 2);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  // Equal estimates keep their given order (2 before 4).
  EXPECT_EQ(runner.start_order, (std::vector<Id>{6, 2, 4, 3, 1, 5}));
  // The spec travels with its task.
  ASSERT_EQ(runner.start_argv0.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(runner.start_argv0[i], "task-" + std::to_string(runner.start_order[i]));
}

TEST(Scheduler, RunsAGroupsTasksTogetherGroupsByTheirSlowestTask) {
  FakeRunner runner;
  auto grouped = [](Id id, double seconds, const char* group) {
    auto task = make_task(id, seconds);
    task.group = group;
    return task;
  };
  // Group b holds the slowest task, so it goes first; within each group, slowest first.
  std::vector<Task> tasks{grouped(1, 2.0, "a"), grouped(2, 1.0, "b"), grouped(3, 9.0, "b"),
                          grouped(4, 5.0, "a"), grouped(5, 3.0, "b"), grouped(6, 0.5, "a")};
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 1);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_EQ(runner.start_order, (std::vector<Id>{3, 5, 2, 4, 1, 6}));
}

TEST(Scheduler, ATaskRunAgainIsReportedOnceWithItsSecondOutcome) {
  FakeRunner runner;
  runner.ids_unique_for_life = false;
  std::vector<Task> tasks{make_task(1, 1.0), make_task(2, 1.0), make_task(3, 1.0)};
  runner.exit_codes[2] = 70;  // a failure a rerun is asked for
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 1);
  std::vector<Id> asked;
  scheduler.rerun_when(
      [&](Id id, const ProcessOutcome& outcome) -> std::optional<portcheck::ProcessSpec> {
        asked.push_back(id);
        if (outcome.exit_code != 70) return std::nullopt;
        runner.exit_codes[2] = 0;  // the second run passes
        portcheck::ProcessSpec spec;
        spec.argv = {"again"};
        spec.fresh = true;
        return spec;
      });
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  // Run again before the next task, with the spec the hook gave.
  EXPECT_EQ(runner.start_order, (std::vector<Id>{1, 2, 2, 3}));
  EXPECT_EQ(runner.start_argv0[2], "again");
  EXPECT_EQ(asked, (std::vector<Id>{1, 2, 2, 3}));
  ASSERT_EQ(rec.counts(), (std::map<Id, int>{{1, 1}, {2, 1}, {3, 1}}));
  for (const auto& [id, outcome] : rec.ended) {
    if (id == 2) {
      EXPECT_EQ(outcome.exit_code, 0);
    }
  }
}

TEST(Scheduler, ReportsEveryTaskExactlyOnce) {
  FakeRunner runner;
  std::vector<Task> tasks;
  for (Id id = 100; id < 120; ++id) {
    tasks.push_back(make_task(id, static_cast<double>(id % 7)));
    runner.ticks[id] = static_cast<int>(id % 3) + 1;
  }
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 4);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted, rec.on_progress()));
  const auto counts = rec.counts();
  ASSERT_EQ(counts.size(), 20u);
  for (Id id = 100; id < 120; ++id) {
    ASSERT_EQ(counts.count(id), 1u) << id;
    EXPECT_EQ(counts.at(id), 1) << id;
  }
  for (const auto& [id, o] : rec.ended) {
    EXPECT_EQ(o.how, Termination::exited);
    EXPECT_EQ(o.exit_code, static_cast<int>(id)) << "the outcome must be the one of that task";
  }
  EXPECT_EQ(runner.cancel_calls, 0u);
  EXPECT_EQ(runner.running(), 0u);
  ASSERT_FALSE(rec.progress.empty());
  std::size_t last_done = 0;
  for (const auto& p : rec.progress) {
    EXPECT_GE(p.done, last_done) << "progress must not go backwards";
    last_done = p.done;
  }
  EXPECT_EQ(rec.progress.back().done, 20u);
  EXPECT_EQ(rec.progress.back().running, 0u);
  EXPECT_EQ(rec.progress.back().total, 20u);
}

TEST(Scheduler, InterruptionCancelsRunningTasksAndReturnsFalse) {
  FakeRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 10; ++id) {
    tasks.push_back(make_task(id, 0.0));
    runner.ticks[id] = static_cast<int>(id);  // task k ends at the k-th wait(), one at a time
  }
  Recorder rec;
  std::atomic<bool> interrupted{false};
  const std::size_t k = 3;
  Scheduler scheduler(runner, 4);
  const auto on_ended = [&](Id id, const ProcessOutcome& o) {
    rec.ended.emplace_back(id, o);
    if (rec.ended.size() == k) interrupted = true;
  };
  EXPECT_FALSE(scheduler.run(tasks, on_ended, interrupted, rec.on_progress()));
  EXPECT_EQ(runner.cancel_calls, 1u);
  EXPECT_EQ(runner.running(), 0u);

  // Tasks 1..3 ended normally; 4..6 (started to refill slots) were cancelled; 7..10 never started
  // and are not reported.
  std::set<Id> exited, cancelled;
  for (const auto& [id, o] : rec.ended) {
    if (o.how == Termination::exited)
      exited.insert(id);
    else if (o.how == Termination::cancelled)
      cancelled.insert(id);
    else
      ADD_FAILURE() << "unexpected outcome for " << id;
  }
  EXPECT_EQ(exited, (std::set<Id>{1, 2, 3}));
  EXPECT_EQ(cancelled, (std::set<Id>{4, 5, 6}));
  EXPECT_EQ(std::set<Id>(runner.cancelled.begin(), runner.cancelled.end()), cancelled);
  EXPECT_EQ(rec.ended.size(), 6u) << "each started task is reported exactly once";
  EXPECT_EQ(runner.start_order, (std::vector<Id>{1, 2, 3, 4, 5, 6}));
}

TEST(Scheduler, InterruptionBeforeRunStartsNothing) {
  FakeRunner runner;
  std::vector<Task> tasks{make_task(1, 1.0), make_task(2, 2.0)};
  Recorder rec;
  std::atomic<bool> interrupted{true};
  Scheduler scheduler(runner, 2);
  EXPECT_FALSE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_TRUE(runner.start_order.empty());
  EXPECT_TRUE(rec.ended.empty());
}

TEST(Scheduler, InterruptionFromAnotherSourceDuringWait) {
  // The flag is set while wait() runs (as a signal handler would), not from on_ended.
  FakeRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 4; ++id) {
    tasks.push_back(make_task(id, 0.0));
    runner.ticks[id] = 1000;  // would run "forever"
  }
  std::atomic<bool> interrupted{false};
  runner.on_wait = [&](FakeRunner& r) {
    if (r.wait_calls == 5) interrupted = true;
  };
  Recorder rec;
  Scheduler scheduler(runner, 2);
  EXPECT_FALSE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_EQ(runner.wait_calls, 5u)
      << "the flag must be honoured right after the wait it was set in";
  ASSERT_EQ(rec.ended.size(), 2u);
  for (const auto& [id, o] : rec.ended) EXPECT_EQ(o.how, Termination::cancelled);
  EXPECT_EQ(runner.start_order, (std::vector<Id>{1, 2}));
}

TEST(Scheduler, SpawnFailuresAreReportedAndDoNotHoldSlots) {
  FakeRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 6; ++id) tasks.push_back(make_task(id, static_cast<double>(10 - id)));
  runner.spawn_fails = {2, 3, 5};
  for (Id id = 1; id <= 6; ++id) runner.ticks[id] = 2;
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 1);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted, rec.on_progress()));
  const auto counts = rec.counts();
  EXPECT_EQ(counts, (std::map<Id, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}));
  for (const auto& [id, o] : rec.ended) {
    if (runner.spawn_fails.count(id)) {
      EXPECT_EQ(o.how, Termination::spawn_failed) << id;
      EXPECT_EQ(o.spawn_error, "cannot start task " + std::to_string(id));
    } else {
      EXPECT_EQ(o.how, Termination::exited) << id;
    }
  }
  EXPECT_EQ(runner.max_running, 1u);
  EXPECT_EQ(rec.progress.back().done, 6u);
}

TEST(Scheduler, AllSpawnsFailing) {
  FakeRunner runner;
  std::vector<Task> tasks{make_task(1, 0), make_task(2, 0), make_task(3, 0)};
  runner.spawn_fails = {1, 2, 3};
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 2);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_EQ(rec.counts(), (std::map<Id, int>{{1, 1}, {2, 1}, {3, 1}}));
  for (const auto& [id, o] : rec.ended) EXPECT_EQ(o.how, Termination::spawn_failed);
}

TEST(Scheduler, ZeroJobsMeansOne) {
  FakeRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 4; ++id) tasks.push_back(make_task(id, 0));
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 0);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_EQ(runner.max_running, 1u);
  EXPECT_EQ(rec.ended.size(), 4u);
}

TEST(Scheduler, MoreJobsThanTasksStartsAllAtOnce) {
  FakeRunner runner;
  std::vector<Task> tasks{make_task(1, 0), make_task(2, 0), make_task(3, 0)};
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 16);
  EXPECT_TRUE(scheduler.run(tasks, rec.on_ended(), interrupted));
  EXPECT_EQ(runner.max_running, 3u);
  EXPECT_EQ(runner.wait_calls, 1u);
  EXPECT_EQ(rec.ended.size(), 3u);
}

TEST(Scheduler, EmptyTaskListSucceedsWithoutWaiting) {
  FakeRunner runner;
  Recorder rec;
  std::atomic<bool> interrupted{false};
  Scheduler scheduler(runner, 4);
  EXPECT_TRUE(scheduler.run({}, rec.on_ended(), interrupted, rec.on_progress()));
  EXPECT_TRUE(runner.start_order.empty());
  EXPECT_EQ(runner.wait_calls, 0u);
  EXPECT_TRUE(rec.ended.empty());
  ASSERT_FALSE(rec.progress.empty());
  EXPECT_EQ(rec.progress.back().total, 0u);
}

}  // namespace

namespace {

using portcheck::EtaEstimator;
using std::chrono::seconds;

TEST(Eta, WorkOverJobsBeforeAnythingRan) {
  EtaEstimator eta(2);
  for (int i = 0; i < 4; ++i) eta.queued(2.0);
  EXPECT_DOUBLE_EQ(*eta.remaining_s(EtaEstimator::Clock::now()), 4.0);
}

TEST(Eta, TheLongestCellBoundsItFromBelow) {
  EtaEstimator eta(16);
  eta.queued(80.0);  // one slow hip:gfx1250 cell among quick ones
  for (int i = 0; i < 32; ++i) eta.queued(1.0);
  EXPECT_DOUBLE_EQ(*eta.remaining_s(EtaEstimator::Clock::now()), 80.0);
}

TEST(Eta, RunningCellsCountWhatIsLeftOfThem) {
  EtaEstimator eta(2);
  const auto t0 = EtaEstimator::Clock::now();
  for (int i = 0; i < 4; ++i) eta.queued(2.0);
  eta.started(0, 2.0, t0);
  eta.started(1, 2.0, t0);
  // 2 queued x 2 s, and 1 s left of each running one, over 2 jobs.
  EXPECT_DOUBLE_EQ(*eta.remaining_s(t0 + seconds(1)), 3.0);
  // Past their expectation they count as about to end, never negative.
  EXPECT_DOUBLE_EQ(*eta.remaining_s(t0 + seconds(5)), 2.0);
}

TEST(Eta, ScalesExpectationsByWhatCellsReallyTook) {
  EtaEstimator eta(1);
  const auto t0 = EtaEstimator::Clock::now();
  for (int i = 0; i < 3; ++i) eta.queued(1.0);
  eta.started(0, 1.0, t0);
  eta.ended(0, 3.0);  // this machine is 3x slower than the estimates
  EXPECT_DOUBLE_EQ(*eta.remaining_s(t0), 6.0);
  eta.started(1, 1.0, t0);
  eta.ended(1, 0.0);  // a cell that took no time says nothing about speed
  EXPECT_DOUBLE_EQ(*eta.remaining_s(t0), 3.0);
}

TEST(Eta, NothingLeftIsNoEstimate) {
  EtaEstimator eta(2);
  EXPECT_FALSE(eta.remaining_s(EtaEstimator::Clock::now()));
  eta.queued(1.0);
  eta.started(7, 1.0, EtaEstimator::Clock::now());
  eta.ended(7, 1.0);
  EXPECT_FALSE(eta.remaining_s(EtaEstimator::Clock::now()));
}

}  // namespace

// ---- batches (issue 43) ------------------------------------------------------------------------

// Runs every start_batch's cells, in order, each for its `ticks` wait()s (1 by default); a
// scripted cell ends `unfinished` (its batch ended first) when it runs in a batch, and its end as
// scripted when it runs alone. A batch asked to stop returns the cells after the one it runs.
class BatchingRunner final : public ProcessRunner {
 public:
  std::vector<std::vector<Id>> batches;  // as started, singles included
  std::set<Id> unfinished_in_batch;
  std::map<Id, int> ticks;
  std::size_t waits = 0;
  std::size_t most_idle_while_held = 0;  // free cores seen beside a batch with cells waiting
  std::set<Id> stop_asked;

  void stop_batch(Id first) override { stop_asked.insert(first); }

  [[nodiscard]] bool runs_batches() const override { return true; }
  void start(Id id, const portcheck::ProcessSpec& spec) override { start_batch({{id, spec}}); }
  void start_batch(const std::vector<std::pair<Id, portcheck::ProcessSpec>>& cells) override {
    std::vector<Id> ids;
    for (const auto& [id, spec] : cells) {
      ids.push_back(id);
      first_of_[id] = cells.front().first;
      spent_[id] = 0;
    }
    batches.push_back(ids);
    running_.push_back(ids);
  }
  std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds) override {
    ++waits;
    if (waits > 100000) throw std::runtime_error("runaway scheduler");
    std::vector<std::pair<Id, ProcessOutcome>> ended;
    for (auto& batch : running_) {
      if (batch.size() > 1 && running_.size() < jobs)
        most_idle_while_held = std::max(most_idle_while_held, jobs - running_.size());
      if (batch.empty() || ++spent_[batch.front()] < ticks_of(batch.front())) continue;
      ProcessOutcome outcome;
      outcome.wall_seconds = 0.5 * ticks_of(batch.front());
      const bool cut = batch.size() > 1 || alone_after_cut_.count(batch.front()) == 0;
      if (unfinished_in_batch.count(batch.front()) != 0 && cut) {
        for (const Id id : batch) {  // the process ended in it: it and the rest, unfinished
          ProcessOutcome left;
          left.how = Termination::unfinished;
          ended.emplace_back(id, left);
          alone_after_cut_.insert(id);
        }
        batch.clear();
        continue;
      }
      ended.emplace_back(batch.front(), outcome);
      batch.erase(batch.begin());
      if (!batch.empty() && stop_asked.count(first_of_.at(batch.front())) != 0) {
        for (const Id id : batch) {
          ProcessOutcome back;
          back.how = Termination::returned;
          ended.emplace_back(id, back);
        }
        batch.clear();
      }
    }
    std::erase_if(running_, [](const std::vector<Id>& b) { return b.empty(); });
    return ended;
  }
  std::vector<std::pair<Id, ProcessOutcome>> cancel_all() override { return {}; }
  [[nodiscard]] std::size_t running() const override { return running_.size(); }
  std::size_t jobs = 1;  // for most_idle_while_held

 private:
  [[nodiscard]] int ticks_of(Id id) const {
    const auto it = ticks.find(id);
    return it == ticks.end() ? 1 : it->second;
  }
  std::vector<std::vector<Id>> running_;
  std::set<Id> alone_after_cut_;
  std::map<Id, int> spent_;
  std::map<Id, Id> first_of_;
};

// One scheduler run of `tasks` on `jobs` cores, their ends in `rec`; false if interrupted.
bool run_all(ProcessRunner& runner, std::size_t jobs, const std::vector<Task>& tasks,
             Recorder& rec) {
  Scheduler scheduler(runner, jobs);
  const std::atomic<bool> stop{false};
  return scheduler.run(tasks, rec.on_ended(), stop);
}

Task batch_task(Id id, const std::string& batch, double seconds, bool measured = true) {
  auto task = make_task(id, seconds);
  task.group = "cuda:90";
  task.batch_key = batch;
  task.measured = measured;
  return task;
}

TEST(SchedulerBatches, ConsecutiveTasksOfOneKeyShareAProcessUpToTheirCompileTime) {
  BatchingRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 240; ++id) tasks.push_back(batch_task(id, id <= 200 ? "m1" : "m2", 0.5));
  tasks.push_back(batch_task(241, "", 0.5));  // no key: always alone
  Recorder rec;
  ASSERT_TRUE(run_all(runner, 2, tasks, rec));
  EXPECT_EQ(rec.ended.size(), 241u);
  std::size_t largest = 0;
  for (const auto& batch : runner.batches) {
    largest = std::max(largest, batch.size());
    const bool first_key = batch.front() <= 200;
    for (const Id id : batch) EXPECT_EQ(id <= 200, first_key) << "one key to a batch";
    if (std::count(batch.begin(), batch.end(), Id{241}) != 0) {
      EXPECT_EQ(batch.size(), 1u);
    }
  }
  // About 4 s of 0.5 s cells while much is left; smaller towards the end.
  EXPECT_EQ(largest, 8u);
  EXPECT_EQ(runner.batches.back().size(), 1u);
}

TEST(SchedulerBatches, UnmeasuredTasksAreSizedByWhatEndedBefore) {
  BatchingRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 60; ++id) tasks.push_back(batch_task(id, "m", 9.0, false));
  Recorder rec;
  ASSERT_TRUE(run_all(runner, 1, tasks, rec));
  // Before a cell of its key ended a cell runs alone, whatever the manifest's estimate; then
  // what ended says 0.5 s, 8 to a batch.
  ASSERT_GE(runner.batches.size(), 2u);
  EXPECT_EQ(runner.batches[0].size(), 1u);
  EXPECT_EQ(runner.batches[1].size(), 8u);
}

TEST(SchedulerBatches, ACellItsBatchDidNotFinishRunsAgainAloneAndEndsOnce) {
  BatchingRunner runner;
  runner.unfinished_in_batch = {3};
  std::vector<Task> tasks;
  for (Id id = 1; id <= 6; ++id) tasks.push_back(batch_task(id, "m", 0.5));
  Recorder rec;
  Scheduler scheduler(runner, 1);
  scheduler.batch_cells(6);
  std::atomic<bool> stop{false};
  ASSERT_TRUE(scheduler.run(tasks, rec.on_ended(), stop));
  EXPECT_EQ(rec.counts(), (std::map<Id, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}));
  for (const auto& [id, outcome] : rec.ended) EXPECT_NE(outcome.how, Termination::unfinished);
  ASSERT_GE(runner.batches.size(), 4u);
  EXPECT_EQ(runner.batches.front(), (std::vector<Id>{1, 2, 3, 4, 5, 6}));
  for (std::size_t i = 1; i < runner.batches.size(); ++i)
    EXPECT_EQ(runner.batches[i].size(), 1u) << "run again alone";
}

TEST(SchedulerBatches, OneCellToAProcessWhenAskedOrWhenTheRunnerCannot) {
  BatchingRunner runner;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 10; ++id) tasks.push_back(batch_task(id, "m", 0.1));
  Recorder rec;
  Scheduler scheduler(runner, 1);
  scheduler.batch_cells(1);
  std::atomic<bool> stop{false};
  ASSERT_TRUE(scheduler.run(tasks, rec.on_ended(), stop));
  EXPECT_EQ(runner.batches.size(), 10u);

  FakeRunner plain;  // no batches
  Recorder again;
  Scheduler alone(plain, 1);
  ASSERT_TRUE(alone.run(tasks, again.on_ended(), stop));
  EXPECT_EQ(plain.start_order.size(), 10u);
}

namespace {

// The run on H200 that found it (issue 43): eight of a kernel's cells went to one process, taken
// for half a second each, and took a minute each, one after another, while the other cores had
// nothing left to do. Here the history says half a second (another Triton release, say).
TEST(SchedulerBatches, ABatchOfSlowCellsGivesBackWhatItHasNotBegunWhenCoresWouldIdle) {
  BatchingRunner runner;
  runner.jobs = 4;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 8; ++id) {
    tasks.push_back(batch_task(id, "rope", 0.6));
    runner.ticks[id] = 100;  // a minute each, where the others take half a second
  }
  for (Id id = 9; id <= 208; ++id) tasks.push_back(batch_task(id, "add", 0.5));
  Recorder rec;
  ASSERT_TRUE(run_all(runner, 4, tasks, rec));
  std::map<Id, int> once;
  for (Id id = 1; id <= 208; ++id) once[id] = 1;
  EXPECT_EQ(rec.counts(), once);
  for (const auto& [id, outcome] : rec.ended) EXPECT_NE(outcome.how, Termination::returned);
  EXPECT_EQ(runner.batches.front().size(), 6u);  // packed as estimated (4 s), then given back
  EXPECT_FALSE(runner.stop_asked.empty());
  // 800 waits of slow cells in one process would make the run 800 waits long; on four cores the
  // floor is (800 + 200) / 4 = 250, and the longest cell, 100.
  EXPECT_LT(runner.waits, 400u);
}

// A kernel's cells that ended in this run say how long its other cells take, not the run's mean:
// once a cell of `rope` took 10 s, its other cells go one to a process.
TEST(SchedulerBatches, UnmeasuredCellsOfAKeyThatEndedSlowRunAlone) {
  BatchingRunner runner;
  runner.jobs = 1;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 100; ++id) tasks.push_back(batch_task(id, "add", 0, false));
  for (Id id = 101; id <= 120; ++id) {
    tasks.push_back(batch_task(id, "rope", 0, /*measured=*/false));
    runner.ticks[id] = 20;  // 10 s each
  }
  Recorder rec;
  ASSERT_TRUE(run_all(runner, 1, tasks, rec));
  EXPECT_EQ(rec.ended.size(), 120u);
  std::size_t rope_batches = 0;
  for (const auto& batch : runner.batches) {
    if (batch.front() <= 100) continue;
    // The first is its kernel's probe (alone, as nothing measured it); the next know better.
    if (rope_batches++ > 0) {
      EXPECT_EQ(batch.size(), 1u) << "rope batch " << rope_batches;
    }
  }
  EXPECT_GT(rope_batches, 1u);
}

// Where nothing was measured before, each kernel's first cell runs in the first wave, and a
// kernel found slow starts its other cells before the fast ones: Liger on the H200 started its
// rope cells (20-45 s where the rest take 0.5 s) last, in their locality order, and its last 25 s
// ran on 4 of 16 cores.
TEST(SchedulerBatches, AKernelItsFirstCellFindsSlowStartsItsOtherCellsFirst) {
  BatchingRunner runner;
  runner.jobs = 4;
  std::vector<Task> tasks;
  for (Id id = 1; id <= 1200; ++id)
    tasks.push_back(batch_task(id, "add" + std::to_string(id % 6), 0, /*measured=*/false));
  for (Id id = 1201; id <= 1202; ++id) {
    tasks.push_back(batch_task(id, "rope", 0, /*measured=*/false));
    runner.ticks[id] = 200;
  }
  Recorder rec;
  ASSERT_TRUE(run_all(runner, 4, tasks, rec));
  EXPECT_EQ(rec.ended.size(), 1202u);
  // The floor: (1200 + 2 * 200) / 4 = 400 waits. Started last, in their order, the rope cells
  // would end at about 300 + 200.
  EXPECT_LT(runner.waits, 440u);
}

}  // namespace
