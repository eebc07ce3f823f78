#pragma once
#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace util {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  std::uint64_t rss_bytes = 0;
  char state = '?';  // 'Z' for a zombie awaiting its parent's wait
};

// One pass over /proc. Processes that vanish mid-scan are skipped.
std::vector<ProcessInfo> snapshot_processes();

// Members of session `sid` in a snapshot.
std::vector<ProcessInfo> session_members(const std::vector<ProcessInfo>& all, pid_t sid);

// Sends SIGKILL to every process in session `sid` until none is left (bounded retries); a
// process that left the session by calling setsid() itself is out of reach by design.
void kill_session(pid_t sid);

// Makes this process the reaper of its orphaned descendants, so grandchildren whose parent died
// are re-parented here and can be waited for instead of escaping to init.
void become_subreaper();

}  // namespace util
