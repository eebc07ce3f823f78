#include "util/run_cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "util/unique_fd.hpp"

namespace util {
namespace {

// The mount point of the unified (v2) hierarchy: /sys/fs/cgroup on a v2-only system,
// /sys/fs/cgroup/unified on a hybrid one; empty when it is not mounted.
std::filesystem::path unified_mount() {
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPEROPTIONS"
    const auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, mount_point;
    if (fields >> id >> parent >> device >> root >> mount_point && root == "/") return mount_point;
  }
  return {};
}

// This process's path in the unified hierarchy: the "0::/PATH" line of /proc/self/cgroup.
std::string unified_path() {
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);)
    if (line.starts_with("0::")) return line.substr(3);
  return {};
}

bool write_text(const std::filesystem::path& file, std::string_view text) {
  const UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
  return fd.valid() &&
         ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

std::vector<pid_t> members(const std::filesystem::path& dir) {
  std::vector<pid_t> out;
  std::ifstream procs(dir / "cgroup.procs");
  for (pid_t pid = 0; procs >> pid;) out.push_back(pid);
  return out;
}

// The cgroup this process was in before it first joined a run's: where its death watches go.
std::filesystem::path& home_cgroup() {
  static std::filesystem::path home;
  return home;
}

}  // namespace

void leave_run_cgroups() {
  if (!home_cgroup().empty())
    (void)write_text(home_cgroup() / "cgroup.procs", std::to_string(::getpid()));
}

std::filesystem::path own_cgroup_v2() {
  const auto mount = unified_mount();
  const auto path = unified_path();
  if (mount.empty() || path.empty()) return {};
  return mount / std::filesystem::path(path).relative_path();
}

RunCgroup::RunCgroup(const std::string& name) {
  parent_ = own_cgroup_v2();
  if (parent_.empty()) {
    why_not_ = "no cgroup v2 hierarchy is mounted";
    return;
  }
  // Both ends of the move must be ours to write: into the new cgroup, and back out of it.
  if (::access((parent_ / "cgroup.procs").c_str(), W_OK) != 0) {
    why_not_ = "this process's cgroup " + parent_.string() + " is not delegated to it";
    return;
  }
  const auto dir = parent_ / name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    why_not_ = "cannot make " + dir.string() + ": " + std::strerror(errno);
    return;
  }
  path_ = dir;
}

RunCgroup::~RunCgroup() {
  leave();
  if (!path_.empty()) ::rmdir(path_.c_str());  // the death watch normally has already
}

bool RunCgroup::join() {
  if (path_.empty() || joined_) return joined_;
  joined_ = write_text(path_ / "cgroup.procs", std::to_string(::getpid()));
  if (!joined_) why_not_ = "cannot move into " + path_.string() + ": " + std::strerror(errno);
  if (joined_ && home_cgroup().empty()) home_cgroup() = parent_;
  return joined_;
}

void RunCgroup::leave() {
  if (!joined_) return;
  joined_ = !write_text(parent_ / "cgroup.procs", std::to_string(::getpid()));
}

void empty_and_remove_cgroup(const std::filesystem::path& dir, pid_t spare) {
  if (dir.empty()) return;
  if (spare == 0) (void)write_text(dir / "cgroup.kill", "1");  // the whole subtree
  for (int round = 0; round < 100; ++round) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.is_directory(ec)) empty_and_remove_cgroup(entry.path(), spare);
    const auto pids = members(dir);
    bool left = false;
    for (const pid_t pid : pids) {
      if (pid == spare) continue;
      ::kill(pid, SIGKILL);
      left = true;
    }
    if (!left && !pids.empty()) return;  // only the spared process: it removes the cgroup itself
    if (!left && (::rmdir(dir.c_str()) == 0 || errno == ENOENT)) return;
    ::usleep(10000);
  }
}

}  // namespace util
