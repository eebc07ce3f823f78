#include "src/run/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "src/run/eta.hpp"

namespace portcheck {
namespace {

using Clock = std::chrono::steady_clock;

// A batch holds about this much compile time: the fork, set-up and exit it saves (tens of
// milliseconds a cell with a large zygote) are then a few percent of it, and a batch that ends
// early costs at most that much of its cells' work run again.
constexpr double kBatchSeconds = 4.0;
constexpr std::size_t kBatchCells = 32;
// Before anything has ended, a cell with no history is taken for this long in what is left.
constexpr double kUnmeasuredSeconds = 0.5;
// Towards the end of the run batches shrink to this share of what is left per core, so that the
// cores end together rather than one batch last.
constexpr double kShareOfWhatIsLeft = 0.25;
// A batch whose cells after the first run past twice their expected time, and this much more,
// gives back those it has not begun (estimates of cells never measured can be off by a hundred
// times: a kernel whose every cell takes a minute, packed as if each took half a second).
constexpr double kOverrunSlackSeconds = 2.0;
// A cell expected to take this long or more starts before the others, the slowest first: such a
// cell started late is the run's tail (on the H200 Liger's rope cells, 20-45 s each on
// hip:gfx1100, started last and left 12 of 16 cores idle for 25 s), and the warm zygote and the
// batch that locality order saves it are a few percent of its time.
constexpr double kSlowCellSeconds = kBatchSeconds;

// Locality first, then slowest first: a group's tasks together (one zygote stays warm for them
// and memory holds fewer zygotes at once), groups in the order of their slowest task so that the
// longest cell of the run still starts among the first; within a group a batch key's tasks
// together (they may share a process), keys and tasks slowest first.
void order(std::vector<Task>& tasks) {
  std::map<std::string, double> slowest_group, slowest_batch;
  for (const auto& task : tasks) {
    slowest_group[task.group] = std::max(slowest_group[task.group], task.expected_seconds);
    slowest_batch[task.batch_key] = std::max(slowest_batch[task.batch_key], task.expected_seconds);
  }
  std::stable_sort(tasks.begin(), tasks.end(), [&](const Task& a, const Task& b) {
    const auto group = [&](const Task& t) { return std::pair(-slowest_group[t.group], t.group); };
    const auto batch = [&](const Task& t) {
      return std::pair(-slowest_batch[t.batch_key], t.batch_key);
    };
    if (group(a) != group(b)) return group(a) < group(b);
    if (batch(a) != batch(b)) return batch(a) < batch(b);
    return a.expected_seconds > b.expected_seconds;
  });
}

// How long tasks take: a task's measured history, else the mean of what ended in this run of its
// batch key (its module and target), else unknown: such a cell runs alone until one of its key has
// ended (on the H200 a run's mean put eight of Liger's minute-long rope cells in one batch). Also
// what the tasks not yet started add up to, the unknown ones at the run's mean.
class CompileTimes {
 public:
  void queued(const Task& task, int sign = 1) {
    (task.measured ? measured_waiting_ : unmeasured_waiting_) +=
        sign * (task.measured ? task.expected_seconds : 1.0);
  }
  void taken(const Task& task) { queued(task, -1); }

  // Whether the task's batch key is now known to be slow where it was not before.
  bool ended(const Task& task, double seconds) {
    sum_ += seconds;
    ++count_;
    if (task.batch_key.empty()) return false;
    auto& [sum, count] = by_batch_[task.batch_key];
    const bool slow_before = count > 0 && sum / static_cast<double>(count) >= kSlowCellSeconds;
    sum += seconds;
    ++count;
    return !slow_before && sum / static_cast<double>(count) >= kSlowCellSeconds;
  }
  [[nodiscard]] std::optional<double> estimate(const Task& task) const {
    if (task.measured) return task.expected_seconds;
    const auto it = task.batch_key.empty() ? by_batch_.end() : by_batch_.find(task.batch_key);
    if (it == by_batch_.end()) return std::nullopt;
    return it->second.first / static_cast<double>(it->second.second);
  }
  // Of the tasks not yet started.
  [[nodiscard]] double waiting() const {
    return std::max(0.0, measured_waiting_) + std::max(0.0, unmeasured_waiting_) * mean();
  }

 private:
  [[nodiscard]] double mean() const {
    return count_ > 0 ? sum_ / static_cast<double>(count_) : kUnmeasuredSeconds;
  }

  double measured_waiting_ = 0;
  double unmeasured_waiting_ = 0;  // a count
  double sum_ = 0;
  std::size_t count_ = 0;
  std::map<std::string, std::pair<double, std::size_t>> by_batch_;  // sum, count
};

// A batch that runs: its cells, how many ended, and from when (its first cell's end: the wait for
// a zygote and the first cell's own fork are not the batch's doing) the rest should take `rest_s`.
struct RunningBatch {
  std::vector<ProcessRunner::Id> ids;
  std::size_t ended = 0;
  double rest_s = 0;
  std::optional<Clock::time_point> rest_from;
  bool stop_asked = false;
};

// One Scheduler::run: the tasks not yet started (in order; those a batch gave back go first, as
// the ones known to be slow), the batches running, and when to ask one to stop.
class Run {
 public:
  Run(ProcessRunner& runner, std::size_t jobs, std::size_t cells, std::vector<Task> tasks)
      : runner_(runner), jobs_(jobs), cells_(cells), eta_(jobs) {
    add(std::move(tasks));
  }

  // Queues tasks behind those that wait, in their order (order()), each batch key's first a
  // scout (run alone, to measure the key) where nothing measured the key (see Rank).
  void add(std::vector<Task> tasks) {
    order(tasks);
    for (auto& task : tasks) {
      eta_.queued(task.expected_seconds);
      times_.queued(task);
      // Batches of a fixed size (cells_) are not sized by what a scout would measure.
      if (cells_ == 0 && !task.batch_key.empty() && !times_.estimate(task) &&
          scouted_keys_.insert(task.batch_key).second)
        scouts_.insert(task.id);
      sequence_[task.id] = next_sequence_++;
      index_of_[task.id] = all_.size();
      all_.push_back(task);
      waiting_.push_back(std::move(task));
    }
    reorder_ = true;
  }

  [[nodiscard]] bool anything_to_start() const { return !again_.empty() || !waiting_.empty(); }
  [[nodiscard]] const Task& task(ProcessRunner::Id id) const { return all_[index_of_.at(id)]; }
  [[nodiscard]] std::size_t size() const { return all_.size(); }
  EtaEstimator& eta() { return eta_; }

  // Starts what the free cores can take: tasks to run again alone first, then the next batch.
  void start_what_fits() {
    while (anything_to_start() && runner_.running() < jobs_) {
      if (!again_.empty()) {
        runner_.start(again_.front().id, again_.front().spec);
        eta_.started(again_.front().id, again_.front().expected_seconds, Clock::now());
        again_.pop_front();
        continue;
      }
      start_next_batch();
    }
  }

  // A batch that overran its estimate, or holds cells while cores are idle, gives back those it
  // has not begun: every core ends busy until the run ends, whatever the estimates said.
  void stop_batches_that_hold_work() {
    const bool idle = runner_.running() < jobs_ && !anything_to_start();
    const auto now = Clock::now();
    for (auto& [first, batch] : batches_) {
      if (batch.stop_asked || batch.ids.size() - batch.ended < 2) continue;
      const bool overran =
          batch.rest_from && std::chrono::duration<double>(now - *batch.rest_from).count() >
                                 std::max(2 * batch.rest_s, batch.rest_s + kOverrunSlackSeconds);
      if (!idle && !overran) continue;
      runner_.stop_batch(first);
      batch.stop_asked = true;
    }
  }

  // Whether the outcome is the task's end (else it is started again: `rerun_spec`, a return, or
  // a batch that did not finish it).
  bool ended(ProcessRunner::Id id, const ProcessOutcome& outcome,
             const std::optional<ProcessSpec>& rerun_spec) {
    note_batch_progress(id, outcome);
    if (outcome.how == Termination::returned) {  // untouched: as if never started
      returned_.push_back(task(id));
      return false;
    }
    if (outcome.how == Termination::unfinished) {  // its batch ended first: alone, again
      again_.push_back(task(id));
      return false;
    }
    eta_.ended(id, outcome.wall_seconds);
    // A prerequisite's time (an import) says nothing of how long compiles take.
    if (outcome.how != Termination::cancelled && !task(id).prerequisite &&
        times_.ended(task(id), std::max(0.0, outcome.wall_seconds - outcome.waited_seconds)))
      reorder_ = true;
    if (!rerun_spec) return true;
    Task again = task(id);
    again.spec = *rerun_spec;
    again_.push_back(std::move(again));
    return false;
  }

  // Once the outcomes at hand are all seen (a stopped batch returns several at once): the tasks
  // returned go before the others of their rank, in their order, and what waits is put in order
  // again where something changed it.
  void requeue() {
    for (auto it = returned_.rbegin(); it != returned_.rend(); ++it) {
      times_.queued(*it);
      sequence_[it->id] = --first_sequence_;
      waiting_.push_back(std::move(*it));
      reorder_ = true;
    }
    returned_.clear();
    if (reorder_) put_in_order();
    reorder_ = false;
  }

 private:
  // Where a waiting task starts: those expected to be slow (kSlowCellSeconds) first, slowest
  // first; then prerequisites (inspections, whose ends add work); then each batch key's scout
  // while nothing has measured the key (the first cores measure every kernel on every target, so
  // that a slow one is known while most of the run is still ahead); then the rest, in the order
  // they came (order() within what came together).
  struct Rank {
    int tier = 0;
    double slowest_first = 0;
    long sequence = 0;
    std::size_t at = 0;
    bool operator<(const Rank& other) const {
      return std::tie(tier, slowest_first, sequence) <
             std::tie(other.tier, other.slowest_first, other.sequence);
    }
  };

  [[nodiscard]] Rank rank(const Task& task, std::size_t at) const {
    const auto estimate = times_.estimate(task);
    const bool slow = estimate && *estimate >= kSlowCellSeconds;
    const int tier = slow                                      ? 0
                     : task.prerequisite                       ? 1
                     : !estimate && scouts_.count(task.id) > 0 ? 2
                                                               : 3;
    return {tier, slow ? -*estimate : 0.0, sequence_.at(task.id), at};
  }

  void put_in_order() {
    std::vector<Rank> ranks;
    ranks.reserve(waiting_.size());
    for (std::size_t at = 0; at < waiting_.size(); ++at) ranks.push_back(rank(waiting_[at], at));
    std::sort(ranks.begin(), ranks.end());
    std::deque<Task> ordered;
    for (const auto& r : ranks) ordered.push_back(std::move(waiting_[r.at]));
    waiting_ = std::move(ordered);
  }

  // The next task and those after it that make its batch: the following tasks of its batch key,
  // as many as fit the budget (the first always), or exactly up to `cells_` when that is not 0.
  void start_next_batch() {
    const double budget =
        std::min(kBatchSeconds, kShareOfWhatIsLeft * times_.waiting() / static_cast<double>(jobs_));
    std::vector<std::pair<ProcessRunner::Id, ProcessSpec>> batch;
    double total = 0;
    // What is left spread over the free cores: at the end of a run each takes its share.
    const std::size_t free = jobs_ - std::min(jobs_, runner_.running());
    const std::size_t share = (waiting_.size() + free - 1) / std::max<std::size_t>(free, 1);
    const std::size_t most =
        !runner_.runs_batches() ? 1 : std::min(share, cells_ > 0 ? cells_ : kBatchCells);
    const std::string key = waiting_.front().batch_key;
    do {
      const Task& next = waiting_.front();
      const auto more = times_.estimate(next);
      if (!batch.empty() && cells_ == 0 && (!more || total + *more > budget)) break;
      total += more.value_or(0);
      batch.emplace_back(next.id, next.spec);
      eta_.started(next.id, next.expected_seconds, Clock::now());
      times_.taken(next);
      waiting_.pop_front();
    } while (!key.empty() && batch.size() < most && !waiting_.empty() &&
             waiting_.front().batch_key == key);
    if (batch.size() == 1) {
      runner_.start(batch.front().first, batch.front().second);
      return;
    }
    RunningBatch running;
    for (const auto& [id, spec] : batch) {
      running.ids.push_back(id);
      batch_of_[id] = batch.front().first;
    }
    running.rest_s = total - times_.estimate(task(batch.front().first)).value_or(0);
    batches_[batch.front().first] = std::move(running);
    runner_.start_batch(batch);
  }

  void note_batch_progress(ProcessRunner::Id id, const ProcessOutcome& outcome) {
    const auto of = batch_of_.find(id);
    if (of == batch_of_.end()) return;
    const auto it = batches_.find(of->second);
    batch_of_.erase(of);
    if (it == batches_.end()) return;
    auto& batch = it->second;
    if (++batch.ended == batch.ids.size()) {
      batches_.erase(it);
      return;
    }
    if (!batch.rest_from && outcome.how != Termination::returned) batch.rest_from = Clock::now();
  }

  ProcessRunner& runner_;
  std::size_t jobs_;
  std::size_t cells_;
  EtaEstimator eta_;
  CompileTimes times_;
  std::vector<Task> all_;
  std::map<ProcessRunner::Id, std::size_t> index_of_;
  std::deque<Task> waiting_;    // not yet started
  std::deque<Task> again_;      // to run again, alone, before any other
  std::vector<Task> returned_;  // given back by a batch since the last requeue()
  bool reorder_ = false;        // tasks came or came back, a key turned out slow: put_in_order()
  std::map<ProcessRunner::Id, long> sequence_;  // the order tasks came in (given back: before)
  long next_sequence_ = 0;
  long first_sequence_ = 0;
  std::set<std::string> scouted_keys_;  // batch keys with a scout
  std::set<ProcessRunner::Id> scouts_;  // each key's first task, while nothing measured the key
  std::map<ProcessRunner::Id, RunningBatch> batches_;        // by first cell
  std::map<ProcessRunner::Id, ProcessRunner::Id> batch_of_;  // cell -> its batch's first cell
};

}  // namespace

bool Scheduler::run(std::vector<Task> tasks, const OnEnded& on_ended,
                    const std::atomic<bool>& interrupted, const OnProgress& on_progress) {
  added_.clear();
  Run run(runner_, jobs_, batch_cells_, std::move(tasks));
  run.requeue();
  Progress progress{0, 0, run.size(), std::nullopt};
  const auto report = [&] {
    progress.total = run.size();
    progress.running = runner_.running();
    progress.eta_s = run.eta().remaining_s(Clock::now());
    if (on_progress) on_progress(progress);
  };
  while (progress.done < run.size()) {
    if (interrupted.load()) {
      for (const auto& [id, outcome] : runner_.cancel_all()) {
        on_ended(id, outcome);
        ++progress.done;
      }
      return false;
    }
    run.start_what_fits();
    run.stop_batches_that_hold_work();
    report();
    for (const auto& [id, outcome] : runner_.wait(std::chrono::milliseconds(100))) {
      const bool counts = outcome.how != Termination::cancelled &&
                          outcome.how != Termination::unfinished &&
                          outcome.how != Termination::returned;
      const auto spec = rerun_ && counts ? rerun_(id, outcome) : std::nullopt;
      if (!run.ended(id, outcome, spec)) continue;
      on_ended(id, outcome);
      ++progress.done;
    }
    if (!added_.empty()) run.add(std::exchange(added_, {}));
    run.requeue();
  }
  report();
  return true;
}

void Scheduler::add(std::vector<Task> tasks) {
  added_.insert(added_.end(), std::make_move_iterator(tasks.begin()),
                std::make_move_iterator(tasks.end()));
}

}  // namespace portcheck
