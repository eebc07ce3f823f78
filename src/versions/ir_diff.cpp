// The IR half of `diff` (declared in diff.hpp): a cell's files in a `check --save-ir` folder, and
// their diff after normalisation (src/core/ir_text.hpp).
#include "src/versions/diff.hpp"

#include <algorithm>

#include "src/core/ir_text.hpp"
#include "util/fs.hpp"
#include "util/text_diff.hpp"

namespace portcheck {

namespace fs = std::filesystem;

const std::vector<std::string>& ir_stages() {
  static const std::vector<std::string> stages = {"ttir", "ttgir", "llir", "ptx", "amdgcn"};
  return stages;
}

std::optional<fs::path> saved_ir_dir(const Report& report) {
  const auto& env = report.environment;
  if (!env.is_object() || !env.contains("options") || !env["options"].is_object())
    return std::nullopt;
  const auto it = env["options"].find("save_ir");
  if (it == env["options"].end() || !it->is_string() || it->get<std::string>().empty())
    return std::nullopt;
  return fs::path(it->get<std::string>());
}

std::optional<fs::path> ir_file(const fs::path& dir, const CellResult& cell,
                                std::string_view stage) {
  const auto folder = dir / ir_target_folder(cell.triton) / ir_row_folder(cell.kernel) /
                      ir_target_folder(cell.target);
  const auto extension = "." + std::string(stage);
  std::error_code ec;
  if (cell.metadata.name) {
    auto file = folder / (*cell.metadata.name + extension);
    if (fs::is_regular_file(file, ec)) return file;
  }
  if (!fs::is_directory(folder, ec)) return std::nullopt;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == extension)
      found.push_back(entry.path());
  if (found.empty()) return std::nullopt;
  return *std::min_element(found.begin(), found.end());
}

std::string diff_cell_ir(const CellChange& change, const fs::path& old_dir, const fs::path& new_dir,
                         const IrDiffOptions& options) {
  if (!change.old_cell || !change.new_cell) return "";
  const auto name = [&options](const fs::path& file, const fs::path& dir) {
    return options.full_paths ? file.string() : util::relative_if_inside(file, dir).string();
  };
  std::string out;
  for (const auto& stage : options.stages) {
    const auto a = ir_file(old_dir, *change.old_cell, stage);
    const auto b = ir_file(new_dir, *change.new_cell, stage);
    if (!a || !b) continue;
    out += util::unified_diff(normalize_ir(util::read_file(*a)), normalize_ir(util::read_file(*b)),
                              name(*a, old_dir), name(*b, new_dir), options.context);
  }
  return out;
}

}  // namespace portcheck
