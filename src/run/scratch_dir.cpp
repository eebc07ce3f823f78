#include "src/run/scratch_dir.hpp"

#include <fmt/format.h>

#include "src/run/worker_channels.hpp"

namespace portcheck {

std::string scratch_marker(const std::filesystem::path& folder) {
  // The folder's name is unique in $TMPDIR (mkdtemp) and says which run a process belongs to.
  return fmt::format("{}={}", channels::kRunMarker, folder.filename().string());
}

ScratchDir::ScratchDir(std::string_view prefix)
    : dir_(prefix),
      marker_(scratch_marker(dir_.path())),
      cgroup_(dir_.path().filename().string()),
      death_watch_(marker_, {dir_.path()}, cgroup_.path()),
      membership_(cgroup_) {}

}  // namespace portcheck
