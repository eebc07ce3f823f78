#include "src/run/eta.hpp"

#include <algorithm>

namespace portcheck {

void EtaEstimator::queued(double expected_s) {
  queued_.insert(expected_s);
  queued_s_ += expected_s;
}

void EtaEstimator::started(Id id, double expected_s, Clock::time_point now) {
  if (const auto it = queued_.find(expected_s); it != queued_.end()) {
    queued_.erase(it);
    queued_s_ = queued_.empty() ? 0 : std::max(0.0, queued_s_ - expected_s);
  }
  running_[id] = {expected_s, now};
}

void EtaEstimator::ended(Id id, double actual_s) {
  const auto it = running_.find(id);
  if (it == running_.end()) return;
  // A cell that ends in no time (a crash at import, a cancelled one) says nothing about speed.
  if (actual_s > 0 && it->second.expected_s > 0) {
    ended_expected_s_ += it->second.expected_s;
    ended_actual_s_ += actual_s;
  }
  running_.erase(it);
}

double EtaEstimator::scale() const {
  return ended_expected_s_ > 0 ? ended_actual_s_ / ended_expected_s_ : 1.0;
}

std::optional<double> EtaEstimator::remaining_s(Clock::time_point now) const {
  if (running_.empty() && queued_.empty()) return std::nullopt;
  const double k = scale();
  double work = queued_s_ * k;
  double longest = queued_.empty() ? 0 : *queued_.rbegin() * k;
  for (const auto& [id, cell] : running_) {
    const double ran = std::chrono::duration<double>(now - cell.started).count();
    // Running past its expectation: assume it is about to end rather than going negative.
    const double left = std::max(cell.expected_s * k - ran, 0.0);
    work += left;
    longest = std::max(longest, left);
  }
  return std::max(work / static_cast<double>(jobs_), longest);
}

}  // namespace portcheck
