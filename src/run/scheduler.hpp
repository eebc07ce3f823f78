#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "src/run/process_runner.hpp"

namespace portcheck {

struct Task {
  ProcessRunner::Id id = 0;
  ProcessSpec spec;
  double expected_seconds = 0;  // longest first, so a slow cell does not start last
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

  Scheduler(ProcessRunner& runner, std::size_t jobs) : runner_(runner), jobs_(jobs ? jobs : 1) {}

  // Returns false when interrupted; tasks never started are not reported.
  bool run(std::vector<Task> tasks, const OnEnded& on_ended, const std::atomic<bool>& interrupted,
           const OnProgress& on_progress = {});

 private:
  ProcessRunner& runner_;
  std::size_t jobs_;
};

}  // namespace portcheck
