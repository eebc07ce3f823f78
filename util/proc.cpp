#include "util/proc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "util/fs.hpp"
#include "util/run_cgroup.hpp"

#include "util/unique_fd.hpp"

namespace util {
namespace {

// Reads /proc/<pid>/stat with raw syscalls: this runs every few milliseconds per process.
bool read_stat(pid_t pid, ProcessInfo& info) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  char buf[1024];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  std::string_view text(buf, static_cast<std::size_t>(n));
  // The command name may hold spaces and parentheses; fields resume after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  text.remove_prefix(close + 2);
  // Fields from 3 on: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss
  long long fields[22] = {};
  int index = 0;
  std::size_t pos = 0;
  while (index < 22 && pos < text.size()) {
    const auto end = text.find(' ', pos);
    const auto token =
        text.substr(pos, end == std::string_view::npos ? text.size() - pos : end - pos);
    if (index > 0) std::from_chars(token.data(), token.data() + token.size(), fields[index]);
    ++index;
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  if (index < 22) return false;
  static const long page = ::sysconf(_SC_PAGESIZE);
  info.pid = pid;
  info.state = text.empty() ? '?' : text[0];
  info.ppid = static_cast<pid_t>(fields[1]);
  info.pgrp = static_cast<pid_t>(fields[2]);
  info.session = static_cast<pid_t>(fields[3]);
  info.rss_bytes = fields[21] > 0 ? static_cast<std::uint64_t>(fields[21]) * page : 0;
  for (int field = 11; field <= 14; ++field)  // utime stime cutime cstime
    info.cpu_ticks += fields[field] > 0 ? static_cast<std::uint64_t>(fields[field]) : 0;
  return true;
}

}  // namespace

std::vector<ProcessInfo> snapshot_processes() {
  std::vector<ProcessInfo> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    const char* name = entry->d_name;
    if (name[0] < '0' || name[0] > '9') continue;
    int pid = 0;
    const auto len = std::strlen(name);
    if (std::from_chars(name, name + len, pid).ec != std::errc{}) continue;
    ProcessInfo info;
    if (read_stat(pid, info)) out.push_back(info);
  }
  ::closedir(dir);
  return out;
}

std::optional<std::uint64_t> proportional_set_size(pid_t pid) {
  const auto text = read_file_bounded(fmt::format("/proc/{}/smaps_rollup", pid), 8192);
  if (!text) return std::nullopt;
  const auto at = text->find("\nPss:");
  if (at == std::string::npos) return std::nullopt;
  std::uint64_t kib = 0;
  const char* first = text->data() + at + 5;
  const char* last = text->data() + text->size();
  while (first < last && *first == ' ') ++first;
  if (std::from_chars(first, last, kib).ec != std::errc{}) return std::nullopt;
  return kib * 1024;
}

std::vector<ProcessInfo> session_members(const std::vector<ProcessInfo>& all, pid_t sid) {
  std::vector<ProcessInfo> out;
  for (const auto& p : all)
    if (p.session == sid) out.push_back(p);
  return out;
}

void kill_session(pid_t sid) {
  // kill(-0) and kill(-1) would reach our own group or every process we may signal.
  if (sid <= 1) return;
  ::kill(-sid, SIGKILL);  // the process group led by the session leader, in one call
  for (int attempt = 0; attempt < 50; ++attempt) {
    bool any = false;
    for (const auto& p : snapshot_processes()) {
      if (p.session != sid || p.state == 'Z') continue;
      ::kill(p.pid, SIGKILL);
      any = true;
    }
    if (!any) return;
    ::usleep(1000);
  }
}

void kill_group(pid_t pgid) {
  if (pgid > 1 && pgid != ::getpgrp()) ::kill(-pgid, SIGKILL);
}

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

}  // namespace util

namespace util {
namespace {

void kill_tree(const std::multimap<pid_t, pid_t>& children, pid_t root) {
  ::kill(root, SIGKILL);
  const auto [first, last] = children.equal_range(root);
  for (auto it = first; it != last; ++it) kill_tree(children, it->second);
}

bool environment_holds(pid_t pid, const std::string& marker) {
  const auto text = read_file_bounded(fmt::format("/proc/{}/environ", pid), 1 << 20);
  if (!text) return false;
  for (std::size_t pos = 0; pos < text->size();) {
    const auto end = std::min(text->find('\0', pos), text->size());
    if (std::string_view(*text).substr(pos, end - pos) == marker) return true;
    pos = end + 1;
  }
  return false;
}

[[noreturn]] void watch(int pipe_read, const std::string& marker,
                        const std::vector<std::filesystem::path>& litter,
                        const std::filesystem::path& cgroup, pid_t watched) {
  // Out of any run's cgroup the tool is in: an enclosing run's watch empties that one.
  leave_run_cgroups();
  // Ctrl-C and `kill` of the process group reach us too: only the pipe may end the watch.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
  // Holding the tool's other descriptors would keep its pipes open after it died.
  ::close_range(3, static_cast<unsigned>(pipe_read) - 1, 0);
  ::close_range(static_cast<unsigned>(pipe_read) + 1, ~0U, 0);
  char byte = 0;
  ssize_t n = 0;
  while ((n = ::read(pipe_read, &byte, 1)) < 0 && errno == EINTR) {
  }
  const bool orderly = n == 1;
  for (int round = 0; round < 100; ++round) {
    const auto marked = processes_marked(marker);
    if (marked.empty()) break;
    for (const pid_t pid : marked) ::kill(pid, SIGKILL);
    ::usleep(10000);
  }
  // What no marker finds (a daemon that cleared its environment) is still in the cgroup. After
  // an orderly end the watched process has left it; if it could not, it is spared.
  empty_and_remove_cgroup(cgroup, orderly ? watched : 0);
  if (!orderly) {
    std::error_code ec;
    for (const auto& path : litter) std::filesystem::remove_all(path, ec);
  }
  ::_exit(0);
}

}  // namespace

void kill_strays(const std::vector<ProcessInfo>& snapshot, const std::set<pid_t>& keep) {
  const pid_t self = ::getpid();
  const pid_t own_session = ::getsid(0);
  std::multimap<pid_t, pid_t> children;
  for (const auto& p : snapshot) children.emplace(p.ppid, p.pid);
  for (const auto& p : snapshot) {
    if (p.ppid != self || p.state == 'Z' || p.session == own_session || keep.count(p.session) != 0)
      continue;
    kill_tree(children, p.pid);
  }
}

std::vector<pid_t> processes_marked(const std::string& marker) {
  std::vector<pid_t> out;
  for (const auto& p : snapshot_processes())
    if (p.pid != ::getpid() && p.state != 'Z' && environment_holds(p.pid, marker))
      out.push_back(p.pid);
  return out;
}

DeathWatch::DeathWatch(const std::string& marker, const std::vector<std::filesystem::path>& litter,
                       const std::filesystem::path& cgroup) {
  int fds[2];
  // Close-on-exec: a worker that inherited the write end would keep the watch from ending.
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  const pid_t watched = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    watch(fds[0], marker, litter, cgroup, watched);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return;
  }
  watcher_ = pid;
  pipe_write_ = fds[1];
}

DeathWatch::~DeathWatch() {
  if (watcher_ < 0) return;
  const char orderly = 'x';
  (void)!::write(pipe_write_, &orderly, 1);
  ::close(pipe_write_);
  int status = 0;
  while (::waitpid(watcher_, &status, 0) < 0 && errno == EINTR) {
  }
}

namespace {

// A cgroup limit file's number; nullopt for "max", a missing file or anything unreadable.
std::optional<std::uint64_t> limit_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text.empty() || text == "max") return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::uint64_t> cgroup_memory_limit(std::string_view self_cgroup,
                                                 const std::filesystem::path& cgroup_root) {
  std::istringstream lines{std::string(self_cgroup)};
  std::string line;
  std::optional<std::uint64_t> lowest;
  const auto keep = [&](std::optional<std::uint64_t> limit) {
    if (limit && (!lowest || *limit < *lowest)) lowest = limit;
  };
  while (std::getline(lines, line)) {
    const auto first = line.find(':');
    const auto last = line.rfind(':');
    if (first == std::string::npos || first == last) continue;
    const auto controllers = line.substr(first + 1, last - first - 1);
    const auto relative = std::filesystem::path(line.substr(last + 1)).relative_path();
    if (controllers.empty()) {  // v2, the unified hierarchy: this cgroup and every ancestor
      for (auto dir = cgroup_root / relative;; dir = dir.parent_path()) {
        keep(limit_in(dir / "memory.max"));
        if (dir == cgroup_root || !dir.has_relative_path() || dir == dir.parent_path()) break;
      }
    } else if (controllers.find("memory") != std::string::npos) {
      keep(limit_in(cgroup_root / "memory" / relative / "memory.limit_in_bytes"));
    }
  }
  return lowest;
}

std::uint64_t usable_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  std::uint64_t physical = pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) *
                                                            static_cast<std::uint64_t>(page_size)
                                                      : 0;
  std::ifstream self("/proc/self/cgroup");
  const std::string cgroups((std::istreambuf_iterator<char>(self)),
                            std::istreambuf_iterator<char>());
  if (const auto limit = cgroup_memory_limit(cgroups, "/sys/fs/cgroup");
      limit && (physical == 0 || *limit < physical))
    physical = *limit;
  return physical;
}

}  // namespace util
