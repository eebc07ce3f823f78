#pragma once
#include <filesystem>
#include <optional>
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

// `file` relative to `root` when it lies inside it (`root` itself gives "."), else `file`
// unchanged: also when one is absolute and the other not. Lexical only: nothing is normalised (a
// ".." after the root's part stays), no link is resolved and nothing is read from the disk.
std::filesystem::path relative_if_inside(const std::filesystem::path& file,
                                         const std::filesystem::path& root);

// A fresh private directory that is removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) noexcept;
  TempDir& operator=(TempDir&&) noexcept;
  ~TempDir();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace util
