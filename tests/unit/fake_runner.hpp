#pragma once
// A scripted ProcessRunner for tests of what drives processes (the Scheduler, the check
// pipeline): nothing is started. Each task "runs" for a scripted number of wait() calls;
// scripted spawn failures never run.
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "src/run/process_runner.hpp"

namespace portcheck {

class FakeRunner final : public ProcessRunner {
 public:
  // How many wait() calls task `id` stays running (default 1).
  std::map<Id, int> ticks;
  // Tasks whose start() fails, as Supervisor reports it: pending until the next wait().
  std::set<Id> spawn_fails;
  // Exit code reported for each task (default: the id).
  std::map<Id, int> exit_codes;
  // The whole outcome of a task that ends, when scripted (used once: a later task of the same
  // id, in another scheduler run, is scripted anew).
  std::map<Id, ProcessOutcome> outcomes;
  // Called by start() before the task runs, as a worker would begin: it may write the task's
  // files and script its outcome.
  std::function<void(FakeRunner&, Id, const ProcessSpec&)> on_start;
  // True: an id is started once in the runner's life (one scheduler run). False: only never
  // twice at once, as when several scheduler runs share the runner (the check's module
  // inspection, then its cells).
  bool ids_unique_for_life = true;

  std::vector<Id> start_order;
  std::vector<std::string> start_argv0;
  std::size_t max_running = 0;
  std::size_t wait_calls = 0;
  std::size_t cancel_calls = 0;
  std::vector<Id> cancelled;
  // Called at the start of every wait(), after the fake's own bookkeeping checks.
  std::function<void(FakeRunner&)> on_wait;

  void start(Id id, const ProcessSpec& spec) override {
    if (ids_unique_for_life) {
      EXPECT_EQ(std::count(start_order.begin(), start_order.end(), id), 0)
          << "task " << id << " started twice";
    }
    EXPECT_EQ(running_.count(id), 0u) << "task " << id << " started while it runs";
    EXPECT_EQ(cancel_calls, 0u) << "start() after cancel_all()";
    start_order.push_back(id);
    start_argv0.push_back(spec.argv.empty() ? "" : spec.argv.front());
    if (on_start) on_start(*this, id, spec);
    if (spawn_fails.count(id)) {
      ProcessOutcome o;
      o.how = Termination::spawn_failed;
      o.spawn_error = "cannot start task " + std::to_string(id);
      pending_.emplace_back(id, o);
      return;
    }
    const auto t = ticks.find(id);
    running_[id] = t == ticks.end() ? 1 : t->second;
    max_running = std::max(max_running, running_.size());
  }

  std::vector<std::pair<Id, ProcessOutcome>> wait(std::chrono::milliseconds) override {
    ++wait_calls;
    EXPECT_LT(wait_calls, 10000u) << "the scheduler seems to spin forever";
    if (wait_calls >= 10000u) throw std::runtime_error("runaway scheduler");
    if (on_wait) on_wait(*this);
    auto ended = std::move(pending_);
    pending_.clear();
    for (auto it = running_.begin(); it != running_.end();) {
      if (--it->second <= 0) {
        ended.emplace_back(it->first, outcome_of(it->first));
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
    return ended;
  }

  std::vector<std::pair<Id, ProcessOutcome>> cancel_all() override {
    ++cancel_calls;
    auto ended = std::move(pending_);
    pending_.clear();
    for (const auto& [id, left] : running_) {
      ProcessOutcome o;
      o.how = Termination::cancelled;
      o.signal = 9;
      ended.emplace_back(id, o);
      cancelled.push_back(id);
      outcomes.erase(id);
    }
    running_.clear();
    return ended;
  }

  [[nodiscard]] std::size_t running() const override { return running_.size(); }

  [[nodiscard]] std::set<Id> running_ids() const {
    std::set<Id> out;
    for (const auto& [id, left] : running_) out.insert(id);
    return out;
  }

 private:
  ProcessOutcome outcome_of(Id id) {
    if (const auto scripted = outcomes.find(id); scripted != outcomes.end()) {
      const auto o = scripted->second;
      outcomes.erase(scripted);
      return o;
    }
    ProcessOutcome o;
    o.how = Termination::exited;
    const auto code = exit_codes.find(id);
    o.exit_code = code == exit_codes.end() ? static_cast<int>(id) : code->second;
    return o;
  }

  std::map<Id, int> running_;
  std::vector<std::pair<Id, ProcessOutcome>> pending_;
};

}  // namespace portcheck
