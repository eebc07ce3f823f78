#include "src/run/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <utility>

#include "src/run/eta.hpp"

namespace portcheck {
namespace {

// A batch holds about this much compile time: the fork, set-up and exit it saves (tens of
// milliseconds a cell with a large zygote) are then a few percent of it, and a batch that ends
// early costs at most that much of its cells' work run again.
constexpr double kBatchSeconds = 4.0;
constexpr std::size_t kBatchCells = 32;
// Before anything has ended, a cell with no history is taken for this long.
constexpr double kUnmeasuredSeconds = 0.5;
// Towards the end of the run batches shrink to this share of what is left per core, so that the
// cores end together rather than one batch last.
constexpr double kShareOfWhatIsLeft = 0.25;

// Locality first, then slowest first: a group's tasks together (one zygote stays warm for them
// and memory holds fewer zygotes at once), groups in the order of their slowest task so that the
// longest cell of the run still starts among the first; within a group a batch key's tasks
// together (they may share a process), keys and tasks slowest first.
void order(std::vector<Task>& tasks) {
  std::map<std::string, double> slowest_group, slowest_batch;
  for (const auto& task : tasks) {
    slowest_group[task.group] = std::max(slowest_group[task.group], task.expected_seconds);
    slowest_batch[task.batch] = std::max(slowest_batch[task.batch], task.expected_seconds);
  }
  std::stable_sort(tasks.begin(), tasks.end(), [&](const Task& a, const Task& b) {
    const auto group = [&](const Task& t) { return std::pair(-slowest_group[t.group], t.group); };
    const auto batch = [&](const Task& t) { return std::pair(-slowest_batch[t.batch], t.batch); };
    if (group(a) != group(b)) return group(a) < group(b);
    if (batch(a) != batch(b)) return batch(a) < batch(b);
    return a.expected_seconds > b.expected_seconds;
  });
}

// How long tasks take: a task's measured history, else the mean of what ended in this run.
class CompileTimes {
 public:
  explicit CompileTimes(const std::vector<Task>& tasks)
      : measured_after_(tasks.size() + 1, 0.0), unmeasured_after_(tasks.size() + 1, 0) {
    for (std::size_t i = tasks.size(); i-- > 0;) {
      measured_after_[i] =
          measured_after_[i + 1] + (tasks[i].measured ? tasks[i].expected_seconds : 0);
      unmeasured_after_[i] = unmeasured_after_[i + 1] + (tasks[i].measured ? 0 : 1);
    }
  }

  void ended(double wall_seconds) {
    sum_ += wall_seconds;
    ++count_;
  }
  [[nodiscard]] double estimate(const Task& task) const {
    return task.measured ? task.expected_seconds : mean();
  }
  // Of the tasks from `next` on.
  [[nodiscard]] double left_from(std::size_t next) const {
    return measured_after_[next] + static_cast<double>(unmeasured_after_[next]) * mean();
  }

 private:
  [[nodiscard]] double mean() const { return count_ > 0 ? sum_ / count_ : kUnmeasuredSeconds; }

  std::vector<double> measured_after_;
  std::vector<std::size_t> unmeasured_after_;
  double sum_ = 0;
  std::size_t count_ = 0;
};

// The end of the batch that starts at `next`: the following tasks of its batch key, as many as
// fit `budget` seconds (the first always), or exactly up to `cells` of them when that is not 0.
std::size_t batch_end(const std::vector<Task>& tasks, std::size_t next, double budget,
                      std::size_t cells, const CompileTimes& times) {
  std::size_t end = next + 1;
  if (tasks[next].batch.empty()) return end;
  double total = times.estimate(tasks[next]);
  const std::size_t most = cells > 0 ? cells : kBatchCells;
  while (end < tasks.size() && end - next < most && tasks[end].batch == tasks[next].batch) {
    const double more = times.estimate(tasks[end]);
    if (cells == 0 && total + more > budget) break;
    total += more;
    ++end;
  }
  return end;
}

// Starts the task at `next`, with the tasks after it that make its batch; returns where the next
// start begins.
std::size_t start_next(ProcessRunner& runner, std::size_t jobs, std::size_t cells,
                       const std::vector<Task>& tasks, std::size_t next,
                       const CompileTimes& times) {
  const double budget = std::min(
      kBatchSeconds, kShareOfWhatIsLeft * times.left_from(next) / static_cast<double>(jobs));
  const std::size_t end =
      runner.runs_batches() ? batch_end(tasks, next, budget, cells, times) : next + 1;
  if (end == next + 1) {
    runner.start(tasks[next].id, tasks[next].spec);
    return end;
  }
  std::vector<std::pair<ProcessRunner::Id, ProcessSpec>> batch;
  for (std::size_t i = next; i < end; ++i) batch.emplace_back(tasks[i].id, tasks[i].spec);
  runner.start_batch(batch);
  return end;
}

}  // namespace

bool Scheduler::run(std::vector<Task> tasks, const OnEnded& on_ended,
                    const std::atomic<bool>& interrupted, const OnProgress& on_progress) {
  order(tasks);
  Progress progress{0, 0, tasks.size(), std::nullopt};
  EtaEstimator eta(jobs_);
  CompileTimes times(tasks);
  for (const auto& task : tasks) eta.queued(task.expected_seconds);
  std::map<ProcessRunner::Id, std::size_t> index_of;
  for (std::size_t i = 0; i < tasks.size(); ++i) index_of[tasks[i].id] = i;
  std::deque<Task> again;  // tasks to run again, alone, before the next new one
  std::size_t next = 0;
  const auto report = [&] {
    progress.running = runner_.running();
    progress.eta_s = eta.remaining_s(EtaEstimator::Clock::now());
    if (on_progress) on_progress(progress);
  };
  while (progress.done < tasks.size()) {
    if (interrupted.load()) {
      for (const auto& [id, outcome] : runner_.cancel_all()) {
        on_ended(id, outcome);
        ++progress.done;
      }
      return false;
    }
    while ((!again.empty() || next < tasks.size()) && runner_.running() < jobs_) {
      if (!again.empty()) {
        runner_.start(again.front().id, again.front().spec);
        eta.started(again.front().id, again.front().expected_seconds, EtaEstimator::Clock::now());
        again.pop_front();
        continue;
      }
      const std::size_t end = start_next(runner_, jobs_, batch_cells_, tasks, next, times);
      for (; next < end; ++next)
        eta.started(tasks[next].id, tasks[next].expected_seconds, EtaEstimator::Clock::now());
    }
    report();
    for (const auto& [id, outcome] : runner_.wait(std::chrono::milliseconds(100))) {
      if (outcome.how == Termination::unfinished) {  // its batch ended first: alone, again
        again.push_back(tasks[index_of.at(id)]);
        continue;
      }
      eta.ended(id, outcome.wall_seconds);
      if (outcome.how != Termination::cancelled) times.ended(outcome.wall_seconds);
      if (rerun_ && outcome.how != Termination::cancelled) {
        if (auto spec = rerun_(id, outcome)) {
          Task task = tasks[index_of.at(id)];
          task.spec = std::move(*spec);
          again.push_back(std::move(task));
          continue;
        }
      }
      on_ended(id, outcome);
      ++progress.done;
    }
  }
  report();
  return true;
}

}  // namespace portcheck
