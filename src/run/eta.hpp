#pragma once
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>

namespace portcheck {

// How long a matrix still needs, from each cell's expected compile time (the timing history of
// that row and target where there is one, else an estimate) and what the cells that ended really
// took. The expectations are scaled by actual/expected over the cells that ended, so a machine
// slower or faster than the history's, or estimates in the wrong unit, correct themselves as the
// run goes; the answer is the floor of what is left: max(remaining work / jobs, longest cell).
class EtaEstimator {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = std::size_t;

  explicit EtaEstimator(std::size_t jobs) : jobs_(jobs ? jobs : 1) {}

  void queued(double expected_s);
  void started(Id id, double expected_s, Clock::time_point now);
  void ended(Id id, double actual_s);

  // Seconds until every queued and running cell should have ended; nullopt with nothing left.
  [[nodiscard]] std::optional<double> remaining_s(Clock::time_point now) const;

 private:
  [[nodiscard]] double scale() const;

  struct Running {
    double expected_s;
    Clock::time_point started;
  };
  std::size_t jobs_;
  std::multiset<double> queued_;  // expected seconds of each cell not started
  double queued_s_ = 0;           // their sum
  std::map<Id, Running> running_;
  double ended_expected_s_ = 0;
  double ended_actual_s_ = 0;
};

}  // namespace portcheck
