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
  // expected_seconds is a compile time measured before (this row's, or its target's), not the
  // manifest's estimate: batches are sized from it.
  bool measured = false;
  // Tasks of one group run one after another (see Scheduler::run): a fork server's zygote serves
  // a group's cells while it is warm instead of being retired and imported again.
  std::string group;
  // Tasks with one non-empty batch key may run several to a process, one after another, where the
  // runner can (ProcessRunner::start_batch): cells of one kernel module and target.
  std::string batch_key;
  // Its end adds tasks (a module's inspection, whose cells are compiled once it has answered):
  // started before any task not known to be slow.
  bool prerequisite = false;
};

struct Progress {
  std::size_t done = 0;
  std::size_t running = 0;
  std::size_t total = 0;
  std::optional<double> eta_s;  // until every task should have ended (EtaEstimator)
};

// Keeps up to `jobs` processes running until every task has ended or `interrupted` becomes true.
// Where the runner runs batches, consecutive tasks of one batch key share a process, as many as
// make a batch of about kBatchSeconds (less towards the end of the run, so that every core ends
// together), sized from measured compile times: a task's own history, else the mean of what ended
// in this run of its batch key; with neither, it runs alone. A task its batch did not finish runs
// again alone. A batch that runs well past
// its estimate, or holds cells not yet begun while cores are idle, is asked to stop
// (ProcessRunner::stop_batch): the cells it gives back are started again like any others.
// Two exceptions to the order: the first task of each batch key nothing measured goes first (the
// first wave measures every kernel on every target), and tasks expected to take seconds go before
// the others, slowest first, as soon as that is known (a slow cell started last is the run's tail).
class Scheduler {
 public:
  using OnEnded = std::function<void(ProcessRunner::Id, const ProcessOutcome&)>;
  using OnProgress = std::function<void(const Progress&)>;
  // Asked first when a task ends: a spec to run that task again with (before any task not yet
  // started; the end is then not reported), or nullopt.
  using Rerun = std::function<std::optional<ProcessSpec>(ProcessRunner::Id, const ProcessOutcome&)>;

  Scheduler(ProcessRunner& runner, std::size_t jobs) : runner_(runner), jobs_(jobs ? jobs : 1) {}

  void rerun_when(Rerun rerun) { rerun_ = std::move(rerun); }
  // Batches of exactly up to `cells` tasks, whatever their times (1: none); 0, the default,
  // sizes them from compile times.
  void batch_cells(std::size_t cells) { batch_cells_ = cells; }

  // Returns false when interrupted; tasks never started are not reported. Groups run in the
  // order of their slowest task, each group's tasks slowest first.
  bool run(std::vector<Task> tasks, const OnEnded& on_ended, const std::atomic<bool>& interrupted,
           const OnProgress& on_progress = {});

  // During run(), from its OnEnded: more tasks, queued behind those that wait (ordered among
  // themselves as run()'s are), which run() then also runs to their end.
  void add(std::vector<Task> tasks);

 private:
  ProcessRunner& runner_;
  std::size_t jobs_;
  Rerun rerun_;
  std::size_t batch_cells_ = 0;
  std::vector<Task> added_;  // by add(), not yet handed to the run
};

}  // namespace portcheck
