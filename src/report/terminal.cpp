#include "src/report/terminal.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "src/report/grouping.hpp"
#include "src/report/terminal_text.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

const char* kReset = "\033[0m";

const char* colour_for(Status status) {
  switch (status) {
    case Status::ok:
      return "\033[32m";
    case Status::failed:
      return "\033[31m";
    case Status::xfail:
      return "\033[33m";
    case Status::xpass:
      return "\033[35m";
    case Status::launch:
      return "\033[31m";
    case Status::unchecked:
      return "\033[2m";
  }
  return "";
}

std::string paint(const std::string& text, const char* colour, const TerminalStyle& style) {
  return style.colour ? fmt::format("{}{}{}", colour, text, kReset) : text;
}

// "!" marks a cell the static pre-checks predicted to fail, whatever then happened to it.
std::string label_of(const CellResult& cell, const std::map<std::string, std::string>& letters) {
  const std::string mark = cell.predicted.is_object() ? "!" : "";
  if (cell.status == Status::ok) return "ok" + mark;
  if (cell.status == Status::xpass) return "xpass" + mark;
  if (cell.status == Status::unchecked) return "·";
  auto label = short_label(cell.kind);
  if (const auto it = letters.find(cell.fingerprint); it != letters.end())
    label += ":" + it->second;
  return (cell.status == Status::xfail ? "x" + label : label) + mark;
}

// The static pre-checks against what really happened, and launch-limit warnings.
std::string prediction_lines(const Report& report) {
  std::size_t predicted = 0, did_fail = 0, unchecked = 0;
  std::vector<std::string> compiled_anyway, launch_warnings;
  for (const auto& c : report.cells) {
    if (c.status == Status::unchecked) ++unchecked;
    if (c.launch.is_object() && c.status != Status::launch)
      for (const auto& p : c.launch.value("problems", nlohmann::json::array()))
        launch_warnings.push_back(
            fmt::format("{} on {}: {}", c.kernel, c.target, p.get<std::string>()));
    if (!c.predicted.is_object()) continue;
    ++predicted;
    if (c.kind == FailureKind::predicted) continue;  // not compiled: nothing to compare
    if (c.failed_outcome())
      ++did_fail;
    else
      compiled_anyway.push_back(fmt::format("{} on {}", c.kernel, c.target));
  }
  std::string out;
  const bool static_only =
      unchecked > 0 || std::any_of(report.cells.begin(), report.cells.end(),
                                   [](const auto& c) { return c.kind == FailureKind::predicted; });
  if (predicted > 0 || static_only) {
    std::size_t compiled = predicted;
    for (const auto& c : report.cells) compiled -= c.kind == FailureKind::predicted ? 1 : 0;
    out += fmt::format("static pre-checks predicted {} failing cells before compiling", predicted);
    if (compiled > 0) out += fmt::format("; {} of the {} compiled did fail", did_fail, compiled);
    if (compiled < predicted)
      out += fmt::format("; {} not compiled (--static)", predicted - compiled);
    out += " (! marks them)\n";
    if (!compiled_anyway.empty())
      out +=
          fmt::format("    predicted but compiled anyway: {}\n", util::join(compiled_anyway, ", "));
  }
  for (const auto& w : launch_warnings) out += fmt::format("launch-limit warning: {}\n", w);
  return out;
}

// Long explanations wrapped under their label, so footnotes stay readable in an 100-column
// terminal.
std::string wrapped(const std::string& label, const std::string& text, std::size_t width = 100) {
  const std::string indent(4 + label.size(), ' ');
  std::string out = "    " + label;
  std::size_t column = out.size();
  std::size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    auto end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const auto word = text.substr(pos, end - pos);
    if (!first && column + 1 + word.size() > width) {
      out += "\n";
      out += indent;
      out += word;
      column = indent.size() + word.size();
    } else {
      out += (first ? "" : " ") + word;
      column += (first ? 0 : 1) + word.size();
    }
    first = false;
    pos = end + 1;
  }
  return out + "\n";
}

// A footnote's "in pass P (stage S)": unlike failure_where (the CI formats), an unknown stage is
// left empty rather than shown as "?".
std::string where_failed(const CellResult& cell) {
  if (!cell.pass.empty()) return fmt::format("in pass {} (stage {})", cell.pass, cell.stage);
  return fmt::format("in stage {}", cell.stage);
}

// "triton-portcheck 0.2.0 · triton 3.9.0 (python 3.11.7) · no GPU involved", with every Triton
// version when the run checked several.
std::string title_line(const Report& report) {
  const auto& env = report.environment;
  std::string triton = env.contains("triton") ? env["triton"].value("version", "?") : "?";
  if (env.contains("tritons") && env["tritons"].is_array() && env["tritons"].size() > 1) {
    triton.clear();
    for (const auto& t : env["tritons"])
      triton += (triton.empty() ? "" : ", ") + t.value("version", "?");
  }
  const auto python = env.contains("python") ? env["python"].value("version", "?") : "?";
  return fmt::format("triton-portcheck {} · triton {} (python {}) · no GPU involved\n",
                     report.tool_version, triton, python);
}

// The matrix: one block per Triton environment when a run checked several, in the order they
// ran; rows by targets, each label padded to its column.
class MatrixWriter {
 public:
  MatrixWriter(const Report& report, const std::map<std::string, std::string>& letters,
               const TerminalStyle& style)
      : report_(report), letters_(letters), style_(style) {
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
    const auto widths = column_widths(at);
    out += fmt::format("{:<{}}", "kernel", name_width());
    for (std::size_t i = 0; i < report_.targets.size(); ++i)
      out += fmt::format("{:<{}}", report_.targets[i],
                         i + 1 == report_.targets.size() ? 0 : widths[i]);
    out += "\n";
    for (const auto& row : report_.rows) out += row_line(row, at, widths);
    return out;
  }

 private:
  using Positions = std::map<std::pair<std::string, std::string>, const CellResult*>;

  [[nodiscard]] std::size_t name_width() const {
    std::size_t width = std::string("kernel").size();
    for (const auto& row : report_.rows) width = std::max(width, row.size());
    return width + 2;
  }

  [[nodiscard]] std::vector<std::size_t> column_widths(const Positions& at) const {
    std::vector<std::size_t> widths;
    for (const auto& target : report_.targets) {
      std::size_t w = target.size();
      for (const auto& row : report_.rows)
        if (const auto it = at.find({row, target}); it != at.end())
          w = std::max(w, label_of(*it->second, letters_).size());
      widths.push_back(w + 2);
    }
    return widths;
  }

  [[nodiscard]] std::string row_line(const std::string& row, const Positions& at,
                                     const std::vector<std::size_t>& widths) const {
    std::string line = fmt::format("{:<{}}", row, name_width());
    for (std::size_t i = 0; i < report_.targets.size(); ++i) {
      const bool last = i + 1 == report_.targets.size();
      const auto it = at.find({row, report_.targets[i]});
      std::string label =
          it == at.end() ? (report_.interrupted ? "?" : "-") : label_of(*it->second, letters_);
      const std::string padded = last ? label : fmt::format("{:<{}}", label, widths[i]);
      if (it == at.end()) {
        line += padded;
      } else {
        // Pad first, then colour, so escape codes do not break the columns.
        const auto trimmed = label.size();
        line += paint(padded.substr(0, trimmed), colour_for(it->second->status), style_) +
                padded.substr(trimmed);
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  }

  const Report& report_;
  const std::map<std::string, std::string>& letters_;
  const TerminalStyle& style_;
  std::vector<std::string> blocks_;
  std::map<std::tuple<std::string, std::string, std::string>, const CellResult*> cells_at_;
};

// A failure group's footnote: "[A] kind in stage S: message", the cells it covers, where, why.
// With several Triton environments a target is named with its version: hip:gfx942 (3.8.0).
std::string footnote(const FailureGroup& g, bool several_tritons) {
  const auto& first = *g.cells.front();
  std::string out = fmt::format("[{}] {} {}: {}\n", g.letter, to_string(first.kind),
                                where_failed(first), first.message);
  std::map<std::string, std::vector<std::string>> targets_by_kernel;
  std::vector<std::string> kernel_order;
  for (const auto* c : g.cells) {
    if (!targets_by_kernel.count(c->kernel)) kernel_order.push_back(c->kernel);
    targets_by_kernel[c->kernel].push_back(
        several_tritons ? fmt::format("{} ({})", c->target, c->triton_version) : c->target);
  }
  for (const auto& k : kernel_order) {
    std::string targets;
    for (const auto& t : targets_by_kernel[k]) targets += (targets.empty() ? "" : ", ") + t;
    out += fmt::format("    {} on {}\n", k, targets);
  }
  if (first.error_source && !first.error_source->file.empty())
    out += fmt::format("    at {}:{}\n", display_path(first.error_source->file),
                       first.error_source->line);
  if (!first.why.empty()) out += wrapped("why: ", first.why);
  if (!first.link.empty()) out += fmt::format("    see: {}\n", first.link);
  return out;
}

std::string baseline_lines(const Report& report) {
  if (!report.baseline.applied) return "";
  std::size_t known = 0;
  for (const auto& c : report.cells) known += c.in_baseline ? 1 : 0;
  std::string out =
      fmt::format("baseline {}: {} failures already known", report.baseline.origin, known);
  if (report.baseline.fixed.empty()) return out + ", none fixed\n";
  out += fmt::format(", {} fixed since:\n", report.baseline.fixed.size());
  for (const auto& f : report.baseline.fixed)
    out += fmt::format("    fixed: {} on {} (was {}: {})\n", f.row, f.target, f.kind, f.message);
  return out;
}

}  // namespace

std::string display_path(const std::string& file) {
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  if (ec) return file;
  return util::relative_if_inside(file, cwd).string();
}

std::string failure_where(const CellResult& cell) {
  if (!cell.pass.empty()) return fmt::format("in pass {} (stage {})", cell.pass, cell.stage);
  return fmt::format("in stage {}", cell.stage.empty() ? "?" : cell.stage);
}

std::string describe_failure(const CellResult& cell) {
  return fmt::format("{} {}: {}", to_string(cell.kind), failure_where(cell), cell.message);
}

std::string cell_label(const CellResult& cell, const std::map<std::string, std::string>& letters) {
  return label_of(cell, letters);
}

std::string summary_line(const Report& report) {
  std::size_t ok = 0, failed = 0, fresh = 0, xfail = 0, xpass = 0, cached = 0, unchecked = 0;
  const CellResult* slowest = nullptr;
  for (const auto& c : report.cells) {
    ok += c.status == Status::ok ? 1 : 0;
    failed += c.status == Status::failed || c.status == Status::launch ? 1 : 0;
    unchecked += c.status == Status::unchecked ? 1 : 0;
    xfail += c.status == Status::xfail ? 1 : 0;
    xpass += c.status == Status::xpass ? 1 : 0;
    fresh += c.is_new ? 1 : 0;
    cached += c.cached ? 1 : 0;
    if (c.compile_s > 0 && (slowest == nullptr || c.compile_s > slowest->compile_s)) slowest = &c;
  }
  std::string summary = fmt::format("{} cells{}: {} ok, {} failed ({} new)", report.cells.size(),
                                    cached ? fmt::format(" ({} from cache)", cached) : "",
                                    ok + xpass, failed + xfail, fresh);
  if (xfail) summary += fmt::format(", {} expected to fail", xfail);
  if (xpass) summary += fmt::format(", {} expected to fail but passed", xpass);
  if (unchecked) summary += fmt::format(", {} not compiled (static pre-checks only)", unchecked);
  if (slowest != nullptr)
    summary += fmt::format(" · slowest compile {:.1f} s ({} on {})", slowest->compile_s,
                           slowest->kernel, slowest->target);
  summary += fmt::format(" · wall {:.1f} s", report.wall_s);
  if (report.shard.count)
    summary += fmt::format(" · shard {}/{}: the other cells are shown as -", report.shard.index,
                           report.shard.count);
  if (!report.merged_from.empty())
    summary += fmt::format(" · merged from {} reports", report.merged_from.size());
  if (report.interrupted) summary += " · INTERRUPTED: unfinished cells are shown as ?";
  return summary;
}

std::string render_terminal(const Report& input, const TerminalStyle& style) {
  // Every string from outside is shown escaped; only our own colour codes reach the terminal.
  const Report report = printable_report(input);
  const auto groups = group_failures(report);
  std::map<std::string, std::string> letters;
  for (const auto& g : groups) letters[g.fingerprint] = g.letter;
  const MatrixWriter matrix(report, letters, style);

  std::string out = title_line(report);
  for (const auto& block : matrix.blocks()) out += matrix.block(block);
  for (const auto& g : groups) out += footnote(g, matrix.blocks().size() > 1);
  out += baseline_lines(report);
  out += prediction_lines(report);
  const std::string summary = summary_line(report);
  out += summary + "\n";
  out += kCompileOnlyDisclaimer;
  out += "\n";
  // A CI log runs a line that starts with "::" as a command (GitHub's ::warning::, ::add-mask::):
  // none of ours does, and none from a message may.
  return util::no_workflow_commands(out);
}

}  // namespace portcheck
