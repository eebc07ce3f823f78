#pragma once
// Whether a process tree killed at its time limit had stalled: it used almost no CPU over the last
// stretch of its life. A cell forked from a process with threads may wait for ever on a lock a
// thread held at fork() (a fork hazard: the cell is run again in a fresh process); a compiler
// that never ends, or a `while True`, computes until the limit and is a real timeout, which a
// rerun would only repeat (issue 42: a 4 s limit cost 9.4 s).
//
// The stretch is the last quarter of the time limit, 1 s to 10 s: a hang that began late in a
// long limit is still seen, and the samples (every 250 ms at most) cover it. Stalled means less
// than 5% of one core there. A process that computes gets its share of a core, which drops below
// 5% only with more than 20 runnable processes per core; one waiting on a lock (futex), a pipe or
// a sleep uses nothing. A tree that sleeps on purpose reads as stalled too; that costs it a rerun,
// never a verdict.
#include <chrono>
#include <cstdint>
#include <deque>
#include <utility>

namespace portcheck {

class CpuWindow {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kStalledShareOfCore = 0.05;

  // `born`: when the tree's first process started, with no CPU time yet (a fresh fork or spawn).
  CpuWindow(Clock::time_point born, std::chrono::milliseconds time_limit);
  CpuWindow() : CpuWindow(Clock::time_point{}, std::chrono::milliseconds(0)) {}

  // The tree's CPU time now, summed over its processes (util::ProcessInfo::cpu_ticks). A process
  // that left the tree takes its time with it; such a drop counts as no work, not as negative.
  void sample(Clock::time_point now, std::uint64_t cpu_ticks);

  // A window for the next piece of work of the same tree, from `at`: the CPU time counted so far
  // is the baseline its samples measure from.
  [[nodiscard]] CpuWindow anew(Clock::time_point at, std::chrono::milliseconds time_limit) const;

  // Whether it used less than kStalledShareOfCore over the stretch ending at the last sample;
  // false while the samples span less than half of that stretch.
  [[nodiscard]] bool stalled() const;

 private:
  struct Point {
    Clock::time_point at;
    double cpu_seconds;  // worked since birth
  };
  std::chrono::duration<double> stretch_;
  std::deque<Point> points_;  // oldest first: the last one at least `stretch_` old, then newer ones
  std::uint64_t last_ticks_ = 0;
};

}  // namespace portcheck
