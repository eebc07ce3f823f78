#include "src/report/markdown.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "src/report/grouping.hpp"
#include "src/report/kernel_rollup.hpp"
#include "src/report/repro.hpp"
#include "util/ascii.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

// Everything from outside (names, targets, compiler text, strings of a crafted JSON report) is
// either a code span, shown verbatim (util::markdown_code), or escaped prose
// (util::markdown_text): no @mention, image, link, autolink or HTML from it becomes active in the
// job summary or wherever the file is rendered.
std::string code(const std::string& text) { return util::markdown_code(text); }
std::string cell_code(const std::string& text) { return util::markdown_code(text, true); }
std::string prose(const std::string& text) { return util::markdown_text(text); }

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), util::ascii::is_digit);
}

std::string upstream(const std::string& link) {
  if (link.empty()) return "";
  if (is_upstream_link(link)) return fmt::format("  [upstream]({})\n", link);
  return fmt::format("  upstream: {}\n", code(link));
}

std::string label(const CellResult& cell, const std::map<std::string, std::string>& letters) {
  if (cell.status == Status::ok) return "✅ ok";
  if (cell.status == Status::xpass) return "⚠️ xpass";
  if (cell.status == Status::unchecked) return "·";
  if (cell.status == Status::skipped) return "⏭️ skip";
  std::string text = short_label(cell.kind) + (cell.foreign_launch_verdict() ? "?" : "");
  if (const auto it = letters.find(cell.fingerprint); it != letters.end()) text += ":" + it->second;
  if (cell.status == Status::xfail) return "➖ x" + text;
  return (cell.is_new ? "❌ " : "⭕ ") + text;
}

// The configs autotuners skip, each with why: information under the failures, at most
// kSkippedListed of them.
constexpr std::size_t kSkippedListed = 20;
std::string skipped_configs(const Report& report) {
  std::string out;
  std::size_t listed = 0, more = 0;
  for (const auto& c : report.cells) {
    if (c.status != Status::skipped) continue;
    if (listed++ >= kSkippedListed) {
      ++more;
      continue;
    }
    out += fmt::format("- ⏭️ {} on {}: {} ({})\n", code(c.kernel), code(c.target),
                       code(c.message), prose(autotuner_note(c)));
  }
  if (more) out += fmt::format("- ⏭️ and {} more configs the autotuner skips\n", more);
  return out;
}

// The failure group's cells as one line: "ROW on TARGET", and for a kernel with more rows in the
// group than kRollupAbove, "KERNEL: N rows on TARGETS" (as the terminal's footnote).
std::string group_cells(const FailureGroup& g) {
  std::map<std::string, std::set<std::string>> rows_of;
  std::map<std::string, std::vector<std::string>> targets_of;
  std::vector<std::string> kernels;
  for (const auto* c : g.cells) {
    if (rows_of[c->base_kernel].empty()) kernels.push_back(c->base_kernel);
    rows_of[c->base_kernel].insert(c->kernel);
    auto& targets = targets_of[c->base_kernel];
    if (std::find(targets.begin(), targets.end(), c->target) == targets.end())
      targets.push_back(c->target);
  }
  std::vector<std::string> parts;
  for (const auto& kernel : kernels) {
    if (rows_of[kernel].size() > kRollupAbove) {
      parts.push_back(fmt::format("{}: {} rows on {}", kernel, rows_of[kernel].size(),
                                  util::join(targets_of[kernel], ", ")));
      continue;
    }
    for (const auto* c : g.cells)
      if (c->base_kernel == kernel) parts.push_back(fmt::format("{} on {}", c->kernel, c->target));
  }
  return util::join(parts, ", ");
}

using Positions = std::map<std::pair<std::string, std::string>, const CellResult*>;

std::string table_row(const std::string& name, const std::string& row, const Report& report,
                      const Positions& at, const std::map<std::string, std::string>& letters) {
  std::string out = fmt::format("| {} |", name);
  for (const auto& t : report.targets) {
    const auto it = at.find({row, t});
    out += fmt::format(" {} |", it == at.end() ? "-" : label(*it->second, letters));
  }
  return out + "\n";
}

// The matrix's rows; a kernel of more than kRollupAbove rows is one line of summaries, with its
// failing rows under it, rows that fail alike as one line (kernel_rollup.hpp).
std::string table_rows(const Report& report, const Positions& at,
                       const std::map<std::string, std::string>& letters) {
  std::string out;
  const auto cell_at = [&](const std::string& row, const std::string& target) {
    const auto it = at.find({row, target});
    return it == at.end() ? nullptr : it->second;
  };
  for (const auto& kernel : rows_by_kernel(report)) {
    if (kernel.rows.size() <= kRollupAbove) {
      for (const auto& row : kernel.rows)
        out += table_row(cell_code(row), row, report, at, letters);
      continue;
    }
    out += fmt::format("| {} |",
                       cell_code(fmt::format("{} ({} rows)", kernel.kernel, kernel.rows.size())));
    for (const auto& t : report.targets) {
      std::vector<const CellResult*> cells;
      for (const auto& row : kernel.rows)
        if (const auto* c = cell_at(row, t)) cells.push_back(c);
      out += fmt::format(" {} |", cell_code(rollup_label(cells, letters)));
    }
    out += "\n";
    for (const auto& group : failing_rows_alike(kernel, report.targets, cell_at))
      out += table_row("↳ " + cell_code(alike_rows_name(group)), group.rows.front(), report, at,
                       letters);
  }
  return out;
}

}  // namespace

bool is_upstream_link(const std::string& link) {
  constexpr std::string_view prefix = "https://github.com/";
  if (!link.starts_with(prefix)) return false;
  const auto parts = util::split(std::string_view(link).substr(prefix.size()), '/');
  const auto name = [](const std::string& part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return util::ascii::is_word(c) || c == '-' || c == '.';
    });
  };
  return parts.size() == 4 && name(parts[0]) && name(parts[1]) &&
         (parts[2] == "issues" || parts[2] == "pull") && is_digits(parts[3]);
}

std::string render_markdown(const Report& input) {
  const Report report = one_row_per_version(input);  // one row per version when there are several
  std::map<std::string, std::string> letters;
  const auto groups = group_failures(report);
  for (const auto& g : groups) letters[g.fingerprint] = g.letter;
  std::map<std::pair<std::string, std::string>, const CellResult*> at;
  for (const auto& c : report.cells) at[{c.kernel, c.target}] = &c;

  const auto& env = report.environment;
  std::string out =
      fmt::format("### triton-portcheck {} · triton {}\n\n", prose(report.tool_version),
                  prose(env.contains("triton") ? env["triton"].value("version", "?") : "?"));
  out += "| kernel |";
  for (const auto& t : report.targets) out += fmt::format(" {} |", cell_code(t));
  out += "\n|---|";
  for (std::size_t i = 0; i < report.targets.size(); ++i) out += "---|";
  out += "\n";
  out += table_rows(report, at, letters);
  std::size_t failed = 0, fresh = 0, skipped = 0;
  for (const auto& c : report.cells) {
    failed += c.failed_outcome() ? 1 : 0;
    fresh += c.is_new ? 1 : 0;
    skipped += c.status == Status::skipped ? 1 : 0;
  }
  out += fmt::format("\n**{} cells: {} failed, {} new.**", report.cells.size(), failed, fresh);
  if (skipped)
    out += fmt::format(
        " ⏭️ marks {} configs of autotuned launches that Triton's autotuner skips "
        "on that target (not failures: the launch runs the configs that remain).",
        skipped);
  if (report.baseline.applied)
    out += fmt::format(" ⭕ marks failures already in the baseline; {} of its failures are fixed.",
                       report.baseline.fixed.size());
  out += fmt::format("\n\n*{}*\n\n", kCompileOnlyDisclaimer);
  for (const auto& g : groups) {
    const auto& first = *g.cells.front();
    const auto cells = group_cells(g);
    out += fmt::format("- **[{}] {}** in {}{}: {}  \n  {}\n", g.letter, to_string(first.kind),
                       code(first.stage), first.pass.empty() ? "" : " (" + code(first.pass) + ")",
                       code(first.message), code(cells));
    if (!first.why.empty()) out += fmt::format("  *why:* {}\n", prose(first.why));
    // The group's first cell stands for the group: its cells share one fingerprint.
    if (const auto repro = repro_command(first, report.manifest); !repro.empty())
      out += fmt::format("  *repro:* {}\n", code(repro));
    out += upstream(first.link);
    for (const auto* c : g.cells) {
      if (c->foreign_launch_verdict())
        out += fmt::format("  {} on {}: {}\n", code(c->kernel), code(c->target),
                           prose(host_choices_note(*c)));
      if (const auto note = autotuner_note(*c); !note.empty())
        out += fmt::format("  {} on {}: {}\n", code(c->kernel), code(c->target), prose(note));
    }
  }
  out += skipped_configs(report);
  for (const auto& f : report.baseline.fixed)
    out += fmt::format("- fixed since the baseline: {} on {}\n", code(f.row), code(f.target));
  return out;
}

}  // namespace portcheck
