#include "src/report/terminal_matrix.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "src/report/kernel_rollup.hpp"

namespace portcheck {
namespace {

const char* kReset = "\033[0m";

// The colour of a cell's label, by its status.
constexpr std::array<std::pair<Status, const char*>, 7> kColours{{
    {Status::ok, "\033[32m"},
    {Status::failed, "\033[31m"},
    {Status::xfail, "\033[33m"},
    {Status::xpass, "\033[35m"},
    {Status::launch, "\033[31m"},
    {Status::unchecked, "\033[2m"},
    {Status::skipped, "\033[36m"},
}};

const char* colour_for(Status status) {
  for (const auto& [s, colour] : kColours)
    if (s == status) return colour;
  return "";
}

std::string paint(const std::string& text, const char* colour, const TerminalStyle& style) {
  return style.colour ? fmt::format("{}{}{}", colour, text, kReset) : text;
}

// The matrix: one block per Triton environment when a run checked several, in the order they
// ran; rows by targets, each label padded to its column. A kernel of many rows is one line of
// per-target summaries with its failing rows under it (kernel_rollup.hpp), unless style.expand.
class MatrixWriter {
 public:
  MatrixWriter(const Report& report, const std::map<std::string, std::string>& letters,
               const TerminalStyle& style)
      : report_(report), letters_(letters), style_(style), kernels_(rows_by_kernel(report)) {
    for (const auto& cell : report.cells)
      if (std::find(blocks_.begin(), blocks_.end(), cell.triton) == blocks_.end())
        blocks_.push_back(cell.triton);
    if (blocks_.empty()) blocks_.push_back("");
    for (const auto& cell : report.cells)
      cells_at_[{cell.triton, cell.kernel, cell.target}] = &cell;
  }

  // The Triton labels, one block each ("" for a report without cells).
  [[nodiscard]] const std::vector<std::string>& blocks() const { return blocks_; }

  [[nodiscard]] std::string block(const std::string& triton) const {
    Positions at;
    for (const auto& [key, cell] : cells_at_)
      if (std::get<0>(key) == triton || blocks_.size() == 1)
        at[{std::get<1>(key), std::get<2>(key)}] = cell;
    std::string out;
    if (blocks_.size() > 1) {
      std::string version;
      for (const auto& [key, cell] : cells_at_)
        if (std::get<0>(key) == triton) version = cell->triton_version;
      out += fmt::format("triton {}{}:\n", version, triton == "current" ? " (current)" : "");
    }
    std::vector<Line> lines{header()};
    for (const auto& kernel : kernels_) {
      if (style_.expand || kernel.rows.size() <= kRollupAbove) {
        for (const auto& row : kernel.rows) lines.push_back(row_line(row, row, at));
        continue;
      }
      lines.push_back(kernel_line(kernel, at));
      const auto cell_at = [&](const std::string& row, const std::string& target) {
        const auto it = at.find({row, target});
        return it == at.end() ? nullptr : it->second;
      };
      for (const auto& group : failing_rows_alike(kernel, report_.targets, cell_at))
        lines.push_back(row_line("  " + alike_rows_name(group), group.rows.front(), at));
    }
    return out + render(lines);
  }

 private:
  using Positions = std::map<std::pair<std::string, std::string>, const CellResult*>;
  // One line of the matrix: a name, then one label per target, painted by status where set.
  struct Line {
    std::string name;
    std::vector<std::string> labels;
    std::vector<std::optional<Status>> paint_as;
  };

  [[nodiscard]] Line header() const {
    return {"kernel", report_.targets, std::vector<std::optional<Status>>(report_.targets.size())};
  }

  [[nodiscard]] Line row_line(const std::string& name, const std::string& row,
                              const Positions& at) const {
    Line line{name, {}, {}};
    for (const auto& target : report_.targets) {
      const auto it = at.find({row, target});
      if (it == at.end()) {
        line.labels.emplace_back(report_.incomplete() ? "?" : "-");
        line.paint_as.emplace_back();
      } else {
        line.labels.push_back(cell_label(*it->second, letters_));
        line.paint_as.emplace_back(it->second->status);
      }
    }
    return line;
  }

  [[nodiscard]] Line kernel_line(const KernelRows& kernel, const Positions& at) const {
    Line line{fmt::format("{} ({} rows)", kernel.kernel, kernel.rows.size()), {}, {}};
    for (const auto& target : report_.targets) {
      std::vector<const CellResult*> cells;
      for (const auto& row : kernel.rows)
        if (const auto it = at.find({row, target}); it != at.end()) cells.push_back(it->second);
      const auto unfinished = report_.incomplete() ? kernel.rows.size() - cells.size() : 0;
      line.labels.push_back(rollup_label(cells, letters_, unfinished));
      line.paint_as.push_back(cells.empty() ? std::nullopt : std::optional(rollup_status(cells)));
    }
    return line;
  }

  [[nodiscard]] std::string render(const std::vector<Line>& lines) const {
    std::size_t name_width = 0;
    std::vector<std::size_t> widths(report_.targets.size(), 0);
    for (const auto& line : lines) {
      name_width = std::max(name_width, line.name.size());
      for (std::size_t i = 0; i < line.labels.size(); ++i)
        widths[i] = std::max(widths[i], line.labels[i].size());
    }
    std::string out;
    for (const auto& line : lines) {
      std::string text = fmt::format("{:<{}}", line.name, name_width + 2);
      for (std::size_t i = 0; i < line.labels.size(); ++i) {
        const auto& label = line.labels[i];
        const auto pad = i + 1 == line.labels.size() ? 0 : widths[i] + 2 - label.size();
        // Colour the label only, so escape codes do not break the columns.
        text += line.paint_as[i] ? paint(label, colour_for(*line.paint_as[i]), style_) : label;
        text += std::string(pad, ' ');
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    return out;
  }

  const Report& report_;
  const std::map<std::string, std::string>& letters_;
  const TerminalStyle& style_;
  std::vector<KernelRows> kernels_;
  std::vector<std::string> blocks_;
  std::map<std::tuple<std::string, std::string, std::string>, const CellResult*> cells_at_;
};

// A failure group's footnote: "[A] kind in stage S: message", the cells it covers, where, why.
// With several Triton environments a target is named with its version: hip:gfx942 (3.8.0).
}  // namespace

std::string render_matrix(const Report& report, const std::map<std::string, std::string>& letters,
                          const TerminalStyle& style, bool* several_blocks) {
  const MatrixWriter matrix(report, letters, style);
  if (several_blocks != nullptr) *several_blocks = matrix.blocks().size() > 1;
  std::string out;
  for (const auto& block : matrix.blocks()) out += matrix.block(block);
  return out;
}

}  // namespace portcheck
