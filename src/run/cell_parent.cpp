#include "src/run/cell_parent.hpp"

#include <string_view>

#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// The worker's marks, as python/portcheck_worker/base/protocol.py writes them.
constexpr std::string_view kChildForked = "cell-parent forked";
constexpr std::string_view kChildEnded = "cell-parent child-ended";

}  // namespace

bool killed_by_its_child(const std::filesystem::path& progress_path) {
  if (progress_path.empty()) return false;
  const auto text = util::read_file_bounded(progress_path, 1 << 16);
  if (!text) return false;
  bool forked = false;
  for (const auto& line : util::split_lines(*text)) {
    if (line == kChildForked) forked = true;
    if (line == kChildEnded) return false;
  }
  return forked;
}

}  // namespace portcheck
