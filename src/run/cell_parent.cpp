#include "src/run/cell_parent.hpp"

#include <string_view>

#include "src/run/worker_channels.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {

bool killed_by_its_child(const std::filesystem::path& progress_path) {
  if (progress_path.empty()) return false;
  const auto text = util::read_file_bounded(progress_path, 1 << 16);
  if (!text) return false;
  bool forked = false;
  for (const auto& line : util::split_lines(*text)) {
    if (line == channels::kChildForked) forked = true;
    if (line == channels::kChildEnded) return false;
  }
  return forked;
}

}  // namespace portcheck
