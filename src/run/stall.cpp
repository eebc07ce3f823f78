#include "src/run/stall.hpp"

#include <unistd.h>

#include <algorithm>

namespace portcheck {

CpuWindow::CpuWindow(Clock::time_point born, std::chrono::milliseconds time_limit)
    : stretch_(std::clamp(std::chrono::duration<double>(time_limit).count() / 4, 1.0, 10.0)),
      points_{{born, 0.0}} {}

CpuWindow CpuWindow::anew(Clock::time_point at, std::chrono::milliseconds time_limit) const {
  CpuWindow window(at, time_limit);
  window.last_ticks_ = last_ticks_;
  return window;
}

void CpuWindow::sample(Clock::time_point now, std::uint64_t cpu_ticks) {
  static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double worked =
      cpu_ticks > last_ticks_ ? static_cast<double>(cpu_ticks - last_ticks_) / ticks_per_second : 0;
  last_ticks_ = cpu_ticks;
  points_.push_back({now, points_.back().cpu_seconds + worked});
  // Keep one point at least a stretch old, to measure from.
  while (points_.size() > 2 && now - points_[1].at >= stretch_) points_.pop_front();
}

bool CpuWindow::stalled() const {
  const auto& first = points_.front();
  const auto& last = points_.back();
  const double span = std::chrono::duration<double>(last.at - first.at).count();
  if (span < stretch_.count() / 2) return false;
  return last.cpu_seconds - first.cpu_seconds < kStalledShareOfCore * span;
}

}  // namespace portcheck
