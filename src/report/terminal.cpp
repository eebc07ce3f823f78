#include "src/report/terminal.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "src/report/grouping.hpp"
#include "src/report/kernel_rollup.hpp"
#include "src/report/terminal_matrix.hpp"
#include "src/report/terminal_text.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

// "!" marks a cell the static pre-checks predicted to fail, whatever then happened to it; "?" a
// launch-limit verdict on options another vendor's host code chose (host_choices_note); "skip" a
// config its autotuner skips there (autotuner_note).
std::string label_of(const CellResult& cell, const std::map<std::string, std::string>& letters) {
  const std::string mark = cell.predicted.is_object() ? "!" : "";
  if (cell.status == Status::ok) return "ok" + mark;
  if (cell.status == Status::xpass) return "xpass" + mark;
  if (cell.status == Status::unchecked) return "·";
  if (cell.status == Status::skipped) return "skip" + mark;
  auto label = short_label(cell.kind) + (cell.foreign_launch_verdict() ? "?" : "");
  if (const auto it = letters.find(cell.fingerprint); it != letters.end())
    label += ":" + it->second;
  return (cell.status == Status::xfail ? "x" + label : label) + mark;
}

// At most this many cells named in one list (predicted but compiled, launch warnings) unless the
// reader asked for every row: at library size such a list would otherwise run to thousands.
constexpr std::size_t kListedAtMost = 10;

// `items`, or its first kListedAtMost and how many more.
std::vector<std::string> shortened(std::vector<std::string> items, bool expand) {
  if (expand || items.size() <= kListedAtMost) return items;
  const auto more = items.size() - kListedAtMost;
  items.resize(kListedAtMost);
  items.push_back(fmt::format("... and {} more (--expand lists them)", more));
  return items;
}

// The static pre-checks against what really happened, and launch-limit warnings.
std::string prediction_lines(const Report& report, bool expand) {
  std::size_t predicted = 0, did_fail = 0, unchecked = 0, not_compiled = 0;
  std::vector<std::string> compiled_anyway, launch_warnings;
  for (const auto& c : report.cells) {
    if (c.status == Status::unchecked) ++unchecked;
    if (c.launch.is_object() && c.status != Status::launch && c.status != Status::skipped)
      for (const auto& p : c.launch.value("problems", nlohmann::json::array()))
        launch_warnings.push_back(
            fmt::format("{} on {}: {}", c.kernel, c.target, p.get<std::string>()));
    if (!c.predicted.is_object()) continue;
    ++predicted;
    if (c.kind == FailureKind::predicted) {  // not compiled: nothing to compare
      ++not_compiled;
      continue;
    }
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
    // Counted over the cells that carry a prediction: a report whose predicted-kind cells lack
    // one (hand-made, damaged) must not make this go below zero.
    const std::size_t compiled = predicted - not_compiled;
    out += fmt::format("static pre-checks predicted {} failing cells before compiling", predicted);
    if (compiled > 0) out += fmt::format("; {} of the {} compiled did fail", did_fail, compiled);
    if (compiled < predicted)
      out += fmt::format("; {} not compiled (--static)", predicted - compiled);
    out += " (! marks them)\n";
    if (!compiled_anyway.empty())
      out += fmt::format("    predicted but compiled anyway: {}\n",
                         util::join(shortened(compiled_anyway, expand), ", "));
  }
  for (const auto& w : shortened(launch_warnings, expand))
    out += fmt::format("launch-limit warning: {}\n", w);
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

// The footnote's "ROW on TARGETS" lines; a kernel with more rows in the group than
// kRollupAbove is one line, "KERNEL: N rows on TARGETS", unless `expand`.
std::string footnote_rows(const FailureGroup& g, bool several_tritons, bool expand) {
  std::map<std::string, std::vector<std::string>> targets_by_row;
  std::map<std::string, std::set<std::string>> rows_by_kernel;
  std::map<std::string, std::string> kernel_of;
  std::vector<std::string> row_order;
  for (const auto* c : g.cells) {
    if (kernel_of.emplace(c->kernel, c->base_kernel).second) row_order.push_back(c->kernel);
    targets_by_row[c->kernel].push_back(
        several_tritons ? fmt::format("{} ({})", c->target, c->triton_version) : c->target);
    rows_by_kernel[c->base_kernel].insert(c->kernel);
  }
  std::string out;
  std::set<std::string> kernels_done;
  for (const auto& row : row_order) {
    const auto& kernel = kernel_of[row];
    const auto& rows = rows_by_kernel[kernel];
    if (expand || rows.size() <= kRollupAbove) {
      out += fmt::format("    {} on {}\n", row, util::join(targets_by_row[row], ", "));
      continue;
    }
    if (!kernels_done.insert(kernel).second) continue;
    std::vector<std::string> targets;
    for (const auto& r : rows)
      for (const auto& t : targets_by_row[r])
        if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    out += fmt::format("    {}: {} rows on {}\n", kernel, rows.size(), util::join(targets, ", "));
  }
  return out;
}

std::string footnote(const FailureGroup& g, bool several_tritons, bool expand) {
  const auto& first = *g.cells.front();
  std::string out = fmt::format("[{}] {} {}: {}\n", g.letter, to_string(first.kind),
                                where_failed(first), first.message);
  out += footnote_rows(g, several_tritons, expand);
  if (first.error_source && !first.error_source->file.empty())
    out += fmt::format("    at {}:{}\n", display_path(first.error_source->file),
                       first.error_source->line);
  if (!first.why.empty()) out += wrapped("why: ", first.why);
  if (!first.link.empty()) out += fmt::format("    see: {}\n", first.link);
  std::set<std::string> launches_said;  // each launch with no config left, once
  for (const auto* c : g.cells) {
    if (c->foreign_launch_verdict())
      out += wrapped(fmt::format("{} on {}: ", c->kernel, c->target), host_choices_note(*c));
    if (const auto note = autotuner_note(*c); !note.empty() && launches_said.insert(note).second)
      out += wrapped(c->base_kernel + ": ", note);
  }
  return out;
}

// The configs autotuners skip: information, not failures (check/autotuned_launches.hpp).
std::string skipped_config_lines(const Report& report, bool expand) {
  std::vector<std::string> lines;
  for (const auto& c : report.cells)
    if (c.status == Status::skipped)
      lines.push_back(
          fmt::format("{} on {}: {} ({})", c.kernel, c.target, c.message, autotuner_note(c)));
  if (lines.empty()) return "";
  std::string out = fmt::format(
      "skip: {} config{} of autotuned launches that Triton's autotuner skips on that target (not "
      "failures: the launch runs the best of the configs that remain)\n",
      lines.size(), lines.size() == 1 ? "" : "s");
  for (const auto& line : shortened(lines, expand)) out += "    " + line + "\n";
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
  const auto autotuner = autotuner_note(cell);
  return fmt::format("{} {}: {}{}{}", to_string(cell.kind), failure_where(cell), cell.message,
                     bracketed_host_choices_note(cell),
                     autotuner.empty() ? "" : " [" + autotuner + "]");
}

std::string cell_label(const CellResult& cell, const std::map<std::string, std::string>& letters) {
  return label_of(cell, letters);
}

std::string summary_line(const Report& report) {
  std::size_t ok = 0, failed = 0, fresh = 0, xfail = 0, xpass = 0, cached = 0, unchecked = 0,
              represented = 0, shared = 0, skipped = 0;
  const CellResult* slowest = nullptr;
  for (const auto& c : report.cells) {
    ok += c.status == Status::ok ? 1 : 0;
    failed += is_unexpected_failure(c.status) ? 1 : 0;
    unchecked += c.status == Status::unchecked ? 1 : 0;
    xfail += c.status == Status::xfail ? 1 : 0;
    xpass += c.status == Status::xpass ? 1 : 0;
    skipped += c.status == Status::skipped ? 1 : 0;
    fresh += c.is_new ? 1 : 0;
    cached += c.cached ? 1 : 0;
    represented += c.represented_by.empty() ? 0 : 1;
    shared += c.shared_with.empty() ? 0 : 1;
    if (c.compile_s > 0 && (slowest == nullptr || c.compile_s > slowest->compile_s)) slowest = &c;
  }
  std::string summary = fmt::format("{} cells{}: {} ok, {} failed ({} new)", report.cells.size(),
                                    cached ? fmt::format(" ({} from cache)", cached) : "",
                                    ok + xpass, failed + xfail, fresh);
  if (xfail) summary += fmt::format(", {} expected to fail", xfail);
  if (xpass) summary += fmt::format(", {} expected to fail but passed", xpass);
  if (skipped)
    summary += fmt::format(", {} config{} left to the autotuner", skipped, skipped == 1 ? "" : "s");
  if (unchecked) summary += fmt::format(", {} not compiled (static pre-checks only)", unchecked);
  if (represented)
    summary += fmt::format(
        ", {} not compiled (--reduce: each has the verdict of a row that "
        "differs only in divisibility)",
        represented);
  if (shared)
    summary += fmt::format(", {} compiled only to their TTIR (the same as a row's compiled before)",
                           shared);
  if (slowest != nullptr)
    summary += fmt::format(" · slowest compile {:.1f} s ({} on {})", slowest->compile_s,
                           slowest->kernel, slowest->target);
  summary += fmt::format(" · wall {:.1f} s", report.wall_s);
  if (report.shard.count)
    summary += fmt::format(" · shard {}/{}: the other cells are shown as -", report.shard.index,
                           report.shard.count);
  if (!report.merged_from.empty())
    summary += fmt::format(" · merged from {} report{}", report.merged_from.size(),
                           report.merged_from.size() == 1 ? "" : "s");
  if (report.interrupted) summary += " · INTERRUPTED: unfinished cells are shown as ?";
  if (!report.missing_shards.empty())
    summary +=
        fmt::format(" · INCOMPLETE: shard {} missing, the cells no report holds are shown as ?",
                    util::join(report.missing_shards, ", "));
  return summary;
}

// The matrix's "-" outside a shard or an interrupted run (where it has their own meanings): a
// row planned on fewer targets than the run's.
std::string missing_cells_line(const Report& report) {
  if (report.shard.count || report.incomplete()) return "";
  std::set<std::pair<std::string, std::string>> cells;
  for (const auto& c : report.cells) cells.emplace(c.kernel, c.target);
  if (cells.size() == report.rows.size() * report.targets.size()) return "";
  return "- : not checked on that target: the row's own `targets` leave it out, or (capture --as) "
         "its kernel's host code launches other rows on that vendor\n";
}

std::string render_terminal(const Report& input, const TerminalStyle& style) {
  // Every string from outside is shown escaped; only our own colour codes reach the terminal.
  const Report report = printable_report(input);
  const auto groups = group_failures(report);
  std::map<std::string, std::string> letters;
  for (const auto& g : groups) letters[g.fingerprint] = g.letter;
  bool several_tritons = false;
  std::string out = title_line(report);
  out += render_matrix(report, letters, style, &several_tritons);
  out += missing_cells_line(report);
  for (const auto& g : groups) out += footnote(g, several_tritons, style.expand);
  out += skipped_config_lines(report, style.expand);
  out += baseline_lines(report);
  out += prediction_lines(report, style.expand);
  const std::string summary = summary_line(report);
  out += summary + "\n";
  out += kCompileOnlyDisclaimer;
  out += "\n";
  // A CI log runs a line that starts with "::" as a command (GitHub's ::warning::, ::add-mask::):
  // none of ours does, and none from a message may.
  return util::no_workflow_commands(out);
}

}  // namespace portcheck
