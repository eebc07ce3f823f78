#include "util/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace util {

FileLock::FileLock(std::filesystem::path file, Wait wait) : file_(std::move(file)) {
  while (!held_) {
    fd_.reset(::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd_.valid())
      throw std::system_error(errno, std::generic_category(),
                              "cannot open the lock file " + file_.string());
    if (::flock(fd_.get(), LOCK_EX | (wait == Wait::no ? LOCK_NB : 0)) != 0) {
      if (errno == EWOULDBLOCK && wait == Wait::no) {
        fd_.reset();
        return;  // someone alive holds it
      }
      if (errno != EINTR)
        throw std::system_error(errno, std::generic_category(), "cannot lock " + file_.string());
      continue;
    }
    if (!still_named())
      fd_.reset();  // removed by the holder before us: lock the new one
    else
      held_ = true;
  }
}

FileLock::~FileLock() {
  if (held_) ::unlink(file_.c_str());  // then closing fd_ releases the lock
}

bool FileLock::still_named() const {
  struct stat locked {};
  struct stat named {};
  return ::fstat(fd_.get(), &locked) == 0 && ::stat(file_.c_str(), &named) == 0 &&
         locked.st_ino == named.st_ino && locked.st_dev == named.st_dev;
}

}  // namespace util
