#include "util/proc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

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

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

}  // namespace util
