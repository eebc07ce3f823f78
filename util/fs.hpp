#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace util {

// Reads a whole file; throws std::runtime_error naming the path on failure.
std::string read_file(const std::filesystem::path& path);

// Reads at most `max_bytes` of a file, keeping its head and tail when it is longer.
std::optional<std::string> read_file_bounded(const std::filesystem::path& path,
                                             std::size_t max_bytes);

// Writes to a temporary file beside `path`, then renames it over `path`, so readers never see a
// half-written file.
void atomic_write_file(const std::filesystem::path& path, std::string_view contents);

// Where writing to `path` lands: symbolic links followed (relative ones from their own folder)
// to the file they name, which need not exist yet. A loop or too deep a chain is an error.
std::filesystem::path resolve_links(const std::filesystem::path& path);

// "-", or a name of the very file our standard output is (/dev/stdout when it is redirected).
bool is_standard_output(const std::filesystem::path& path);

// An existing FIFO, device or socket (followed through links, /proc's included).
bool is_special_file(const std::filesystem::path& path);

// The null device (/dev/null, or a link to it, or a node of the same device number).
bool is_null_device(const std::filesystem::path& path);

// "device:inode" of an existing file (followed through links), nullopt when there is none: two
// names of one file, hard links included, have the same.
std::optional<std::string> inode_of(const std::filesystem::path& path);

// Writes a report where the user pointed: "-" is standard output; a FIFO, a terminal or a device
// (/dev/stdout, /dev/null) is opened and written as it is; a regular file, or a new one, is
// replaced atomically (atomic_write_file), through any symbolic link, which stays a link.
// Throws std::runtime_error naming the path.
void write_output_file(const std::filesystem::path& path, std::string_view contents);

// `file` relative to `root` when it lies inside it (`root` itself gives "."), else `file`
// unchanged: also when one is absolute and the other not. Lexical only: nothing is normalised (a
// ".." after the root's part stays), no link is resolved and nothing is read from the disk.
std::filesystem::path relative_if_inside(const std::filesystem::path& file,
                                         const std::filesystem::path& root);

// A file or folder that could not be written; `error` is the errno. A full or read-only disk is
// the environment's problem, not a bug: the command line maps it to exit 3 (cli/main.cpp).
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::filesystem::path& path, int error);
  // When the disk is full or read-only: the fix, naming the folder (the temporary folder when
  // the file was in it); empty for any other failure.
  [[nodiscard]] std::string disk_fix() const;
  std::filesystem::path path;
  int error;
};

// Apparent size of every regular file below `dir`; symlinks are not followed (a venv's
// bin/python points at the base interpreter).
std::uint64_t folder_bytes(const std::filesystem::path& dir);

// A fresh private directory that is removed with everything in it on destruction, unless
// released. Throws WriteError when it cannot be made.
class TempDir {
 public:
  // $TMPDIR/<prefix>-XXXXXX
  explicit TempDir(std::string_view prefix);
  // <parent>/<prefix>XXXXXX: where it must be on the same file system as its destination.
  TempDir(const std::filesystem::path& parent, std::string_view prefix);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) noexcept;
  TempDir& operator=(TempDir&&) noexcept;
  ~TempDir();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // Kept: the caller moved it into place, or owns it now.
  void release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

}  // namespace util
