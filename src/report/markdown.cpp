#include "src/report/markdown.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "src/report/grouping.hpp"
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
  std::string text = short_label(cell.kind) + (cell.foreign_launch_verdict() ? "?" : "");
  if (const auto it = letters.find(cell.fingerprint); it != letters.end()) text += ":" + it->second;
  if (cell.status == Status::xfail) return "➖ x" + text;
  return (cell.is_new ? "❌ " : "⭕ ") + text;
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
  for (const auto& row : report.rows) {
    out += fmt::format("| {} |", cell_code(row));
    for (const auto& t : report.targets) {
      const auto it = at.find({row, t});
      out += fmt::format(" {} |", it == at.end() ? "-" : label(*it->second, letters));
    }
    out += "\n";
  }
  std::size_t failed = 0, fresh = 0;
  for (const auto& c : report.cells) {
    failed += c.failed_outcome() ? 1 : 0;
    fresh += c.is_new ? 1 : 0;
  }
  out += fmt::format("\n**{} cells: {} failed, {} new.**", report.cells.size(), failed, fresh);
  if (report.baseline.applied)
    out += fmt::format(" ⭕ marks failures already in the baseline; {} of its failures are fixed.",
                       report.baseline.fixed.size());
  out += fmt::format("\n\n*{}*\n\n", kCompileOnlyDisclaimer);
  for (const auto& g : groups) {
    const auto& first = *g.cells.front();
    std::string cells;
    for (const auto* c : g.cells)
      cells += (cells.empty() ? "" : ", ") + fmt::format("{} on {}", c->kernel, c->target);
    out += fmt::format("- **[{}] {}** in {}{}: {}  \n  {}\n", g.letter, to_string(first.kind),
                       code(first.stage), first.pass.empty() ? "" : " (" + code(first.pass) + ")",
                       code(first.message), code(cells));
    if (!first.why.empty()) out += fmt::format("  *why:* {}\n", prose(first.why));
    out += upstream(first.link);
    for (const auto* c : g.cells)
      if (c->foreign_launch_verdict())
        out += fmt::format("  {} on {}: {}\n", code(c->kernel), code(c->target),
                           prose(host_choices_note(*c)));
  }
  for (const auto& f : report.baseline.fixed)
    out += fmt::format("- fixed since the baseline: {} on {}\n", code(f.row), code(f.target));
  return out;
}

}  // namespace portcheck
