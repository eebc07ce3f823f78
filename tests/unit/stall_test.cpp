// CpuWindow (src/run/stall.hpp): whether a process tree killed at its time limit was waiting
// rather than computing, from samples of its CPU time.
#include "src/run/stall.hpp"

#include <unistd.h>

#include <chrono>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using portcheck::CpuWindow;

namespace {

const auto kTicksPerSecond = static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK));

// Samples every 250 ms (the longest sampling period) for `seconds`, the tree working `share` of
// one core; returns the last sample's time.
CpuWindow::Clock::time_point run(CpuWindow& window, CpuWindow::Clock::time_point from,
                                 double seconds, double share, std::uint64_t& ticks) {
  auto at = from;
  for (int i = 0; i < static_cast<int>(seconds * 4); ++i) {
    at += 250ms;
    ticks += static_cast<std::uint64_t>(share * 0.25 * static_cast<double>(kTicksPerSecond));
    window.sample(at, ticks);
  }
  return at;
}

}  // namespace

TEST(CpuWindow, ATreeThatWaitsHasStalledAndOneThatComputesHasNot) {
  const auto born = CpuWindow::Clock::now();
  std::uint64_t ticks = 0;
  CpuWindow waiting(born, 4000ms);  // a 1 s stretch
  run(waiting, born, 4, 0.0, ticks);
  EXPECT_TRUE(waiting.stalled());

  ticks = 0;
  CpuWindow computing(born, 4000ms);
  run(computing, born, 4, 0.2, ticks);  // a fifth of a core: ten processes per core
  EXPECT_FALSE(computing.stalled());
}

TEST(CpuWindow, OnlyTheLastStretchCounts) {
  const auto born = CpuWindow::Clock::now();
  std::uint64_t ticks = 0;
  // A 40 s limit: a 10 s stretch. 25 s of import at full speed, then a lock: stalled.
  CpuWindow hung_late(born, 40000ms);
  run(hung_late, run(hung_late, born, 25, 1.0, ticks), 15, 0.0, ticks);
  EXPECT_TRUE(hung_late.stalled());
  // Waiting first, then computing until the limit: not stalled.
  ticks = 0;
  CpuWindow busy_late(born, 40000ms);
  run(busy_late, run(busy_late, born, 25, 0.0, ticks), 15, 1.0, ticks);
  EXPECT_FALSE(busy_late.stalled());
}

TEST(CpuWindow, TooShortALifeIsNeverStalled) {
  const auto born = CpuWindow::Clock::now();
  std::uint64_t ticks = 0;
  CpuWindow window(born, 40000ms);  // a 10 s stretch: at least 5 s of samples
  run(window, born, 4, 0.0, ticks);
  EXPECT_FALSE(window.stalled());
  EXPECT_FALSE(CpuWindow().stalled()) << "never sampled";
}

TEST(CpuWindow, TimeTakenAwayByAProcessThatLeftIsNoWork) {
  const auto born = CpuWindow::Clock::now();
  CpuWindow window(born, 4000ms);
  window.sample(born + 250ms, 50 * kTicksPerSecond);  // a child did 50 s of work, then left
  std::uint64_t ticks = 0;                            // its time left with it
  run(window, born + 250ms, 3, 0.0, ticks);
  EXPECT_TRUE(window.stalled());
}
