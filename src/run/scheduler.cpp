#include "src/run/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>

#include "src/run/eta.hpp"

namespace portcheck {
namespace {

// Locality first, then slowest first: a group's tasks together (one zygote stays warm for them
// and memory holds fewer zygotes at once), groups in the order of their slowest task so that the
// longest cell of the run still starts among the first, and within a group the slowest first.
void order(std::vector<Task>& tasks) {
  std::map<std::string, double> slowest;
  for (const auto& task : tasks)
    slowest[task.group] = std::max(slowest[task.group], task.expected_seconds);
  std::stable_sort(tasks.begin(), tasks.end(), [&](const Task& a, const Task& b) {
    const double group_a = slowest[a.group];
    const double group_b = slowest[b.group];
    if (group_a != group_b) return group_a > group_b;
    if (a.group != b.group) return a.group < b.group;
    return a.expected_seconds > b.expected_seconds;
  });
}

}  // namespace

bool Scheduler::run(std::vector<Task> tasks, const OnEnded& on_ended,
                    const std::atomic<bool>& interrupted, const OnProgress& on_progress) {
  order(tasks);
  Progress progress{0, 0, tasks.size(), std::nullopt};
  EtaEstimator eta(jobs_);
  for (const auto& task : tasks) eta.queued(task.expected_seconds);
  std::map<ProcessRunner::Id, std::size_t> index_of;
  for (std::size_t i = 0; i < tasks.size(); ++i) index_of[tasks[i].id] = i;
  std::deque<Task> again;  // tasks to run again, before the next new one
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
      const Task task = again.empty() ? tasks[next++] : again.front();
      if (!again.empty()) again.pop_front();
      runner_.start(task.id, task.spec);
      eta.started(task.id, task.expected_seconds, EtaEstimator::Clock::now());
    }
    report();
    for (const auto& [id, outcome] : runner_.wait(std::chrono::milliseconds(100))) {
      eta.ended(id, outcome.wall_seconds);
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
