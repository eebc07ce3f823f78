#include "src/versions/venv_relocation.hpp"

#include <string>

#include "util/fs.hpp"

namespace portcheck {
namespace fs = std::filesystem;

void relocate_scripts(const fs::path& bin, const fs::path& from, const fs::path& to) {
  const std::string old_path = from.string();
  const std::string new_path = to.string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(bin, ec)) {
    std::error_code e2;
    if (entry.is_symlink(e2) || !entry.is_regular_file(e2)) continue;
    if (entry.file_size(e2) > (1U << 20)) continue;
    std::string text;
    try {
      text = util::read_file(entry.path());
    } catch (const std::exception&) {
      continue;
    }
    if (text.find(old_path) == std::string::npos) continue;
    std::string out;
    std::size_t start = 0;
    for (auto hit = text.find(old_path); hit != std::string::npos;
         hit = text.find(old_path, start)) {
      out.append(text, start, hit - start);
      out += new_path;
      start = hit + old_path.size();
    }
    out.append(text, start);
    const auto perms = fs::status(entry.path(), e2).permissions();
    util::atomic_write_file(entry.path(), out);
    fs::permissions(entry.path(), perms, e2);
  }
}

}  // namespace portcheck
