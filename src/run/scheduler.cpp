#include "src/run/scheduler.hpp"

#include <algorithm>
#include <chrono>

#include "src/run/eta.hpp"

namespace portcheck {

bool Scheduler::run(std::vector<Task> tasks, const OnEnded& on_ended,
                    const std::atomic<bool>& interrupted, const OnProgress& on_progress) {
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) {
    return a.expected_seconds > b.expected_seconds;
  });
  Progress progress{0, 0, tasks.size(), std::nullopt};
  EtaEstimator eta(jobs_);
  for (const auto& task : tasks) eta.queued(task.expected_seconds);
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
    while (next < tasks.size() && runner_.running() < jobs_) {
      runner_.start(tasks[next].id, tasks[next].spec);
      eta.started(tasks[next].id, tasks[next].expected_seconds, EtaEstimator::Clock::now());
      ++next;
    }
    report();
    for (const auto& [id, outcome] : runner_.wait(std::chrono::milliseconds(100))) {
      eta.ended(id, outcome.wall_seconds);
      on_ended(id, outcome);
      ++progress.done;
    }
  }
  report();
  return true;
}

}  // namespace portcheck
