// ForkServerRunner's batches: several cells of one kernel module and target in one forked child
// (issue 43). The fork of a zygote that holds a gigabyte of torch, the child's set-up and its exit
// cost tens of milliseconds of CPU a cell; a batch pays them once. fork_server.cpp forks and
// reaps batches as it does cells; this file follows what runs inside one.
#include <fcntl.h>

#include <algorithm>
#include <filesystem>

#include "src/run/fork_server.hpp"
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
    batch.batch.push_back({id, member_spec, false, false, {}});
  batch.log = std::make_unique<BatchLogReader>(spec.result_path.parent_path() / "batch.log");
  ++stats_.batches;
  enqueue(first, std::move(batch));
}

void ForkServerRunner::stop_batch(Id first) {
  const auto it = in_flight_.find(first);
  if (it == in_flight_.end() || it->second.log == nullptr || it->second.stop_asked) return;
  it->second.stop_asked = true;
  auto stop = it->second.log->path();
  stop += ".stop";
  // Its existence is the message (python/portcheck_worker/cell/batch.py); a failure to create it
  // only leaves the batch to run to its end.
  const util::UniqueFd fd(::open(stop.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

std::size_t ForkServerRunner::running() const {
  return static_cast<std::size_t>(
      std::count_if(in_flight_.begin(), in_flight_.end(), [](const auto& entry) {
        const auto& members = entry.second.batch;
        return members.empty() || !members.back().done;
      }));
}

void ForkServerRunner::advance_batches(std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  for (auto& [id, cell] : in_flight_)
    if (cell.log != nullptr && cell.pid > 0) advance(cell, ended);
}

void ForkServerRunner::advance(InFlight& batch, std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  auto& members = batch.batch;
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
      // The first cell's limit counts from the fork, as a cell's alone does.
      if (k > 0 && limits_.find(batch.pid))
        limits_.rearm(batch.pid, mark.id, members[k].spec, mark.at);
      continue;
    }
    const auto k = first(&Member::done);
    if (k == members.size() || !members[k].begun || members[k].id != mark.id ||
        !std::filesystem::exists(members[k].spec.result_path))
      continue;
    members[k].done = true;
    auto outcome = member_outcome(batch, k, mark.at);
    ++(outcome.how == Termination::unfinished ? stats_.cells_left_by_batches
                                              : stats_.cells_in_batches);
    ended.emplace_back(mark.id, std::move(outcome));
    // Until the next one says it began: a child stuck between two cells is stopped all the same.
    if (k + 1 < members.size() && limits_.find(batch.pid))
      limits_.rearm(batch.pid, members[k + 1].id, members[k + 1].spec, mark.at);
  }
}

ProcessOutcome ForkServerRunner::member_outcome(const InFlight& batch, std::size_t index,
                                                Clock::time_point at) const {
  const auto& member = batch.batch[index];
  ProcessOutcome outcome;
  const auto from = index == 0 ? batch.requested : member.began;
  outcome.wall_seconds = std::chrono::duration<double>(at - from).count();
  outcome.waited_seconds = index == 0 ? batch.waited : 0.0;
  outcome.forked_from_threads = batch.threads;
  if (const auto* entry = limits_.find(batch.pid)) outcome.peak_rss_bytes = entry->peak_rss_bytes;
  // Past its limit between two samples: the first cell's verdict, as alone; a later one's peak
  // may hold what the cells before it left, so it runs again alone.
  if (member.spec.max_rss_bytes > 0 && outcome.peak_rss_bytes > member.spec.max_rss_bytes)
    outcome.how = index == 0 ? Termination::out_of_memory : Termination::unfinished;
  return outcome;
}

void ForkServerRunner::end_batch(InFlight& batch, const ProcessOutcome& process,
                                 std::vector<std::pair<Id, ProcessOutcome>>& ended) {
  if (batch.pid > 0) advance(batch, ended);  // what it wrote before it ended
  ProcessOutcome unfinished;
  unfinished.how = Termination::unfinished;
  for (std::size_t k = 0; k < batch.batch.size(); ++k) {
    const auto& member = batch.batch[k];
    if (member.done) continue;
    // The first cell ran in a fresh fork, as alone: how the process ended is its verdict.
    const bool first = k == 0 && member.begun;
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
