#pragma once
// The tool's temporary folders in $TMPDIR: the run's folder, the interpreter probe's, export's
// one-row manifest, capture's hook and records. All die with the tool, however it ends.
#include <filesystem>
#include <string>
#include <string_view>

#include "util/fs.hpp"
#include "util/proc.hpp"

namespace portcheck {

// The environment entry ("NAME=value") that marks every process started for `folder`: when the
// tool dies, the death watch of `folder` kills the processes that carry it. worker_environment
// adds it; so does capture for the command it runs.
std::string scratch_marker(const std::filesystem::path& folder);

// $TMPDIR/<prefix>-XXXXXX, removed when this object goes and, should the tool be killed (SIGKILL,
// the OOM killer), by a death watch that first ends every process carrying scratch_marker().
// Between mkdtemp and the watch's fork there is an instant a kill still leaves the folder behind.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view prefix);
  [[nodiscard]] const std::filesystem::path& path() const { return dir_.path(); }
  [[nodiscard]] const std::string& marker() const { return marker_; }

 private:
  util::TempDir dir_;  // declared first: it goes after the watch has ended in order
  std::string marker_;
  util::DeathWatch death_watch_;
};

}  // namespace portcheck
