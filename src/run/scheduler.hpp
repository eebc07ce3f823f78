#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/run/process_runner.hpp"

namespace portcheck {

struct Task {
  ProcessRunner::Id id = 0;
  ProcessSpec spec;
  double expected_seconds = 0;  // longest first, so a slow cell does not start last
  // Tasks of one group run one after another (see Scheduler::run): a fork server's zygote serves
  // a group's cells while it is warm instead of being retired and imported again.
  std::string group;
};

struct Progress {
  std::size_t done = 0;
  std::size_t running = 0;
  std::size_t total = 0;
  std::optional<double> eta_s;  // until every task should have ended (EtaEstimator)
};

// Keeps up to `jobs` processes running until every task has ended or `interrupted` becomes true.
class Scheduler {
 public:
  using OnEnded = std::function<void(ProcessRunner::Id, const ProcessOutcome&)>;
  using OnProgress = std::function<void(const Progress&)>;
  // Asked first when a task ends: a spec to run that task again with (before any task not yet
  // started; the end is then not reported), or nullopt.
  using Rerun = std::function<std::optional<ProcessSpec>(ProcessRunner::Id, const ProcessOutcome&)>;

  Scheduler(ProcessRunner& runner, std::size_t jobs) : runner_(runner), jobs_(jobs ? jobs : 1) {}

  void rerun_when(Rerun rerun) { rerun_ = std::move(rerun); }

  // Returns false when interrupted; tasks never started are not reported. Groups run in the
  // order of their slowest task, each group's tasks slowest first.
  bool run(std::vector<Task> tasks, const OnEnded& on_ended, const std::atomic<bool>& interrupted,
           const OnProgress& on_progress = {});

 private:
  ProcessRunner& runner_;
  std::size_t jobs_;
  Rerun rerun_;
};

}  // namespace portcheck
