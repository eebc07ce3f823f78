#pragma once
// A cgroup (v2) of a process's own, for everything it starts, so that nothing it starts outlives
// it. Cgroup membership is what a daemon cannot shed by accident: a process tree loses it at a
// double fork, a session at setsid(), an environment marker at execve() with an empty
// environment; a cgroup keeps every descendant unless the descendant has write access to another
// cgroup and moves itself there. The cgroup is made under the one the process is in, which the
// system must let it write (root, or a systemd user session, which delegates its cgroup to the
// user); elsewhere nothing is made and the caller falls back on what it had.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace util {

class RunCgroup {
 public:
  // Makes <this process's cgroup>/<name>, unless the system does not let it (then path() is
  // empty and `why_not()` says why). Nothing moves yet: see join().
  explicit RunCgroup(const std::string& name);
  // Leaves the cgroup if this process is still in it, and removes it if it is empty.
  ~RunCgroup();
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  // Moves this process (all its threads) into the cgroup, so that every process it starts from
  // now on is born in it. Call after forking whatever must stay outside (the death watch).
  // False, and nothing moved, when there is no cgroup or the move was refused.
  bool join();
  // Moves this process back to the cgroup it came from (before the death watch empties this
  // one). Idempotent.
  void leave();

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] bool joined() const { return joined_; }
  [[nodiscard]] const std::string& why_not() const { return why_not_; }

 private:
  std::filesystem::path parent_;  // the cgroup this process was in
  std::filesystem::path path_;    // the one made; empty: none
  std::string why_not_;
  bool joined_ = false;
};

// Moves the calling process back to the cgroup this process was in before its first join(), if it
// joined one: a death watch forked while the process was inside a run's cgroup must not be in it,
// or the watch of an enclosing run would kill it before it has cleaned up after its own.
void leave_run_cgroups();

// Kills every process in the cgroup at `dir` but `spare` (0: none), and in the cgroups below it
// (a nested run's, whose own watch may be slower), and removes them all: with
// cgroup.kill where the kernel has it (5.14) and nothing is spared, else SIGKILL to each member
// until none is left. For a death watch, which runs outside the cgroup. Bounded: gives up after
// about a second of members that will not die (a process in uninterruptible sleep).
void empty_and_remove_cgroup(const std::filesystem::path& dir, pid_t spare = 0);

// Where this process's cgroup v2 is in the file system (the unified hierarchy's mount point plus
// its path in /proc/self/cgroup), or empty when there is none (a v1-only system).
std::filesystem::path own_cgroup_v2();

}  // namespace util
