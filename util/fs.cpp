#include "util/fs.hpp"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "util/unique_fd.hpp"

namespace util {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(
        fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::optional<std::string> read_file_bounded(const std::filesystem::path& path,
                                             std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  std::string text = out.str();
  if (text.size() <= max_bytes) return text;
  const std::size_t keep = max_bytes / 2;
  return text.substr(0, keep) +
         fmt::format("\n[... {} bytes omitted ...]\n", text.size() - 2 * keep) +
         text.substr(text.size() - keep);
}

WriteError::WriteError(const std::filesystem::path& path_, int error_)
    : std::runtime_error(fmt::format("cannot write {}: {}", path_.string(), std::strerror(error_))),
      path(path_),
      error(error_) {}

std::string WriteError::disk_fix() const {
  if (error != ENOSPC && error != EDQUOT && error != EROFS) return {};
  std::error_code ec;
  const auto temp = std::filesystem::temp_directory_path(ec);
  const auto [end, ignored] = std::mismatch(temp.begin(), temp.end(), path.begin(), path.end());
  const auto what = error == EROFS ? "read-only" : "full";
  if (!ec && !temp.empty() && end == temp.end())
    return fmt::format(
        "the temporary folder {} is {}: free space there or set TMPDIR to a folder "
        "on a disk with room",
        temp.string(), what);
  return fmt::format("the disk holding {} is {}: free space there or write elsewhere",
                     path.parent_path().string(), what);
}

namespace {

void write_all(int fd, std::string_view contents, const std::filesystem::path& path) {
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw WriteError(path, errno);
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::filesystem::path resolve_links(const std::filesystem::path& path) {
  std::filesystem::path current = path;
  for (int depth = 0; depth < 40; ++depth) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(current, ec))) return current;
    const auto target = std::filesystem::read_symlink(current, ec);
    if (ec)
      throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  throw std::runtime_error(
      fmt::format("cannot write {}: too many levels of symbolic links", path.string()));
}

bool is_standard_output(const std::filesystem::path& path) {
  if (path == "-") return true;
  struct stat named {};
  struct stat out {};
  return ::stat(path.c_str(), &named) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 &&
         named.st_dev == out.st_dev && named.st_ino == out.st_ino;
}

bool is_special_file(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

bool is_null_device(const std::filesystem::path& path) {
  struct stat st {};
  struct stat null {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 &&
         S_ISCHR(null.st_mode) && st.st_rdev == null.st_rdev;
}

std::optional<std::string> inode_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return fmt::format("{}:{}", static_cast<std::uint64_t>(st.st_dev),
                     static_cast<std::uint64_t>(st.st_ino));
}

void write_output_file(const std::filesystem::path& path, std::string_view contents) {
  if (is_standard_output(path)) {  // "-", /dev/stdout, /proc/self/fd/1: through our own fd 1
    std::fflush(stdout);
    write_all(STDOUT_FILENO, contents, path);
    return;
  }
  if (!is_special_file(path)) {
    atomic_write_file(resolve_links(path), contents);
    return;
  }
  // Renaming over a FIFO or a device would replace it by a regular file: write into it instead.
  // Opened by its own name: /dev/fd/N and /proc links to pipes resolve only in the kernel.
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) throw WriteError(path, errno);
  write_all(fd.get(), contents, path);
}

void atomic_write_file(const std::filesystem::path& path, std::string_view contents) {
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  UniqueFd fd(::mkstemp(name.data()));
  if (!fd.valid()) throw WriteError(path, errno);
  const std::string tmp_path(name.data());
  try {
    write_all(fd.get(), contents, path);
  } catch (const std::runtime_error&) {
    ::unlink(tmp_path.c_str());
    throw;
  }
  ::fchmod(fd.get(), 0644);
  fd.reset();
  if (::rename(tmp_path.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_path.c_str());
    throw WriteError(path, err);
  }
}

std::filesystem::path relative_if_inside(const std::filesystem::path& file,
                                         const std::filesystem::path& root) {
  auto relative = file.lexically_relative(root);
  if (relative.empty() || relative.begin()->string() == "..") return file;
  return relative;
}

std::uint64_t folder_bytes(const std::filesystem::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(
      dir, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_symlink(e2)) continue;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return total;
}

namespace {

std::filesystem::path temporary_folder() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

}  // namespace

TempDir::TempDir(std::string_view prefix)
    : TempDir(temporary_folder(), fmt::format("{}-", prefix)) {}

TempDir::TempDir(const std::filesystem::path& parent, std::string_view prefix) {
  const std::string tmpl = (parent / fmt::format("{}XXXXXX", prefix)).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) throw WriteError(tmpl, errno);
  path_ = name.data();
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace util
