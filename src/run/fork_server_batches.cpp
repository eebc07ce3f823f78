// ForkServerRunner's batches: several cells of one kernel module and target run by one forked
// leader, which imports the module once and forks each cell from there (issue 43, issue 50). The
// fork of a zygote that holds a gigabyte of torch, the child's set-up and the import cost tens of
// milliseconds of CPU or more a cell; a batch pays them once. fork_server.cpp forks and reaps
// batches as it does cells; this file follows what runs inside one.
#include <fcntl.h>

#include <algorithm>
#include <filesystem>

#include "src/run/fork_server.hpp"
#include "src/run/worker_channels.hpp"
#include "util/unique_fd.hpp"

namespace portcheck {

void ForkServerRunner::start_batch(const std::vector<std::pair<Id, ProcessSpec>>& cells) {
  if (cells.size() == 1) {
    start(cells.front().first, cells.front().second);
    return;
  }
  const auto& [first, spec] = cells.front();
  InFlight batch;
  batch.spec = spec;
  for (const auto& [id, member_spec] : cells)
    batch.members.push_back({id, member_spec, false, false, {}});
  batch.log = std::make_unique<BatchLogReader>(spec.result_path.parent_path() / "batch.log");
  ++stats_.batches;
  enqueue(first, std::move(batch));
}

void ForkServerRunner::stop_batch(Id first) {
  const auto it = in_flight_.find(first);
  if (it == in_flight_.end() || it->second.log == nullptr || it->second.stop_asked) return;
  it->second.stop_asked = true;
  auto stop = it->second.log->path();
  stop += channels::kBatchStopSuffix;
  // Its existence is the message (python/portcheck_worker/cell/batch.py); a failure to create it
  // only leaves the batch to run to its end.
  const util::UniqueFd fd(::open(stop.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

std::size_t ForkServerRunner::running() const {
  return static_cast<std::size_t>(
      std::count_if(in_flight_.begin(), in_flight_.end(), [](const auto& entry) {
        const auto& members = entry.second.members;
        return members.empty() || !members.back().done;
      }));
}

void ForkServerRunner::advance_batches(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  for (auto& [id, cell] : in_flight_)
    if (cell.log != nullptr && cell.pid > 0) advance(cell, ended);
}

void ForkServerRunner::advance(InFlight& batch, std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  auto& members = batch.members;
  const auto first = [&members](bool Member::*flag) {
    return static_cast<std::size_t>(std::find_if(members.begin(), members.end(),
                                                 [flag](const Member& m) { return !(m.*flag); }) -
                                    members.begin());
  };
  for (const auto& mark : batch.log->read_new()) {
    // Only what the batch holds, in its order: the cells' own code could write here too.
    if (mark.kind == BatchMark::Kind::begun) {
      const auto k = first(&Member::begun);
      if (k == members.size() || members[k].id != mark.id) continue;
      members[k].begun = true;
      members[k].began = mark.at;
      members[k].threads = static_cast<int>(std::min<std::uint64_t>(mark.figure, 1 << 20));
      // The first cell's limit counts from the fork, as a cell's alone does; a later one's from
      // its own fork, charged with the import the leader did before the first began.
      if (k > 0 && limits_.find(batch.pid))
        limits_.rearm(batch.pid, mark.id, members[k].spec, mark.at, import_time(batch));
      continue;
    }
    const auto k = first(&Member::done);
    if (k == members.size() || !members[k].begun || members[k].id != mark.id ||
        !std::filesystem::exists(members[k].spec.result_path))
      continue;
    members[k].done = true;
    members[k].peak_rss_bytes = mark.figure;
    auto outcome = member_outcome(batch, k, mark.at);
    ++(outcome.how == Termination::unfinished ? stats_.cells_left_by_batches
                                              : stats_.cells_in_batches);
    ended.emplace_back(mark.id, std::move(outcome));
    // Until the next one says it began: a leader stuck between two cells is stopped all the same.
    if (k + 1 < members.size() && limits_.find(batch.pid))
      limits_.rearm(batch.pid, members[k + 1].id, members[k + 1].spec, mark.at, import_time(batch));
  }
}

ForkServerRunner::Clock::duration ForkServerRunner::import_time(const InFlight& batch) {
  const auto& first = batch.members.front();
  if (!first.begun || first.began < batch.forked) return {};
  return first.began - batch.forked;
}

ProcessOutcome ForkServerRunner::member_outcome(const InFlight& batch, std::size_t index,
                                                Clock::time_point at) const {
  const auto& member = batch.members[index];
  ProcessOutcome outcome;
  const auto from = index == 0 ? batch.requested : member.began;
  outcome.wall_seconds = std::chrono::duration<double>(at - from).count();
  outcome.waited_seconds = index == 0 ? batch.waited : 0.0;
  outcome.forked_from_threads = std::max(batch.threads, member.threads);
  const std::uint64_t sampled =
      limits_.find(batch.pid) != nullptr ? limits_.find(batch.pid)->peak_rss_bytes : 0;
  outcome.peak_rss_bytes = std::max(sampled, member.peak_rss_bytes);
  // Its own process's high-water mark past its limit: its verdict, as alone. Only a sample past
  // it: the sample may have caught the next cell's process as well, so it runs again alone.
  const auto limit = member.spec.max_rss_bytes;
  if (limit > 0 && member.peak_rss_bytes > limit)
    outcome.how = Termination::out_of_memory;
  else if (limit > 0 && sampled > limit)
    outcome.how = Termination::unfinished;
  return outcome;
}

void ForkServerRunner::end_batch(InFlight& batch, const ProcessOutcome& process,
                                 std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  if (batch.pid > 0) advance(batch, ended);  // what it wrote before it ended
  ProcessOutcome unfinished;
  unfinished.how = Termination::unfinished;
  for (std::size_t k = 0; k < batch.members.size(); ++k) {
    const auto& member = batch.members[k];
    if (member.done) continue;
    // The first cell's time limit counted from the fork, as alone: a timeout is its verdict.
    // Anything else that ended it (a crash, exit(), a sample past its memory limit) may have been
    // the leader's, not the cell's own process's: it runs again alone.
    const bool first = k == 0 && member.begun && process.how == Termination::timed_out;
    // Never begun (the batch stopped after a cell before it, or was asked to): untouched by
    // anything the batch ran, it starts anew like a cell never started.
    if (k > 0 && !member.begun) {
      ProcessOutcome returned;
      returned.how = Termination::returned;
      ++stats_.cells_returned_by_batches;
      ended.emplace_back(member.id, returned);
      continue;
    }
    ++(first ? stats_.cells_in_batches : stats_.cells_left_by_batches);
    ended.emplace_back(member.id, first ? process : unfinished);
  }
}

}  // namespace portcheck
