#pragma once
// An exclusive flock on a lock file that no one leaves behind: its holder removes the file before
// unlocking (closing), and a waiter that then gets the lock of a removed file sees that the path
// no longer names that file and locks the path's new file instead, so two processes never hold
// "the" lock at once. A killed holder's file is left: whoever sweeps such files takes the lock
// with Wait::no first (held() false: someone alive has it).
#include <filesystem>

#include "util/unique_fd.hpp"

namespace util {

class FileLock {
 public:
  enum class Wait { yes, no };

  // Throws std::system_error naming the file when it cannot be opened or locked.
  explicit FileLock(std::filesystem::path file, Wait wait = Wait::yes);
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // False only under Wait::no, when someone else holds it.
  [[nodiscard]] bool held() const { return held_; }

 private:
  // Whether the path still names the file we locked.
  [[nodiscard]] bool still_named() const;

  std::filesystem::path file_;
  UniqueFd fd_;
  bool held_ = false;
};

}  // namespace util
