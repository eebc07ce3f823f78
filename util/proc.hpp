#pragma once
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace util {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  std::uint64_t rss_bytes = 0;
  // CPU time in clock ticks: its own (user and system) and that of the children it has waited for.
  std::uint64_t cpu_ticks = 0;
  char state = '?';  // 'Z' for a zombie awaiting its parent's wait
};

// One pass over /proc. Processes that vanish mid-scan are skipped.
std::vector<ProcessInfo> snapshot_processes();

// The proportional set size of `pid` (/proc/PID/smaps_rollup: shared pages divided among the
// processes that map them), or nullopt if it cannot be read. Costlier than RSS: for a few
// processes, not for every sample of every cell.
std::optional<std::uint64_t> proportional_set_size(pid_t pid);

// The memory this process may use: the machine's physical memory (sysconf), or less where its
// cgroup (v2 memory.max, v1 memory.limit_in_bytes) sets a lower limit, as a CI container does.
// 0 when neither can be read.
std::uint64_t usable_memory_bytes();
// The lowest memory limit that a /proc/self/cgroup text names under `cgroup_root`
// (/sys/fs/cgroup): v2's memory.max of the cgroup and its ancestors, v1's memory.limit_in_bytes.
std::optional<std::uint64_t> cgroup_memory_limit(std::string_view self_cgroup,
                                                 const std::filesystem::path& cgroup_root);

// Members of session `sid` in a snapshot.
std::vector<ProcessInfo> session_members(const std::vector<ProcessInfo>& all, pid_t sid);

// Sends SIGKILL to every process in session `sid` until none is left (bounded retries); a
// process that left the session by calling setsid() itself is out of reach by design.
void kill_session(pid_t sid);
// SIGKILL to the process group `pgid` (never our own group, 0 or every process).
void kill_group(pid_t pgid);

// Makes this process the reaper of its orphaned descendants, so grandchildren whose parent died
// are re-parented here and can be waited for instead of escaping to init.
void become_subreaper();

// Kills every direct child of this process that left to start a session of its own, other than
// those in `keep` (the sessions of the workers we started), with all of its descendants. As a
// subreaper we inherit whatever a worker's descendant double-forked and setsid()'d away: that
// is the only way such a daemon can be found, and nothing a check starts may outlive it.
void kill_strays(const std::vector<ProcessInfo>& snapshot, const std::set<pid_t>& keep);

// Every process whose environment holds `marker` ("NAME=value"), this one excepted.
std::vector<pid_t> processes_marked(const std::string& marker);

// Cleans up after this process however it ends, SIGKILL included: a forked watcher waits on a
// pipe only this process holds; at end-of-file it kills every process whose environment holds
// `marker` and every process in `cgroup` (util/run_cgroup.hpp; none when empty) and removes
// that cgroup, and, unless the end was orderly (this object destroyed), removes `litter`.
class DeathWatch {
 public:
  DeathWatch(const std::string& marker, const std::vector<std::filesystem::path>& litter,
             const std::filesystem::path& cgroup = {});
  DeathWatch(const DeathWatch&) = delete;
  DeathWatch& operator=(const DeathWatch&) = delete;
  ~DeathWatch();

 private:
  pid_t watcher_ = -1;
  int pipe_write_ = -1;
};

}  // namespace util
