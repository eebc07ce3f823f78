#include "src/report/markdown.hpp"

#include <map>

#include <fmt/format.h>

#include "src/report/grouping.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

// Markdown table cells: pipes and newlines would break the table; angle brackets would be HTML.
std::string md(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\n':
        out += ' ';
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '`':
        out += "'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// GitHub workflow-command escaping: data escapes %, CR, LF; properties also ':' and ','.
std::string command_data(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string command_property(const std::string& text) {
  std::string out;
  for (const char c : command_data(text)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

std::string label(const CellResult& cell, const std::map<std::string, std::string>& letters) {
  if (cell.status == Status::ok) return "✅ ok";
  if (cell.status == Status::xpass) return "⚠️ xpass";
  if (cell.status == Status::unchecked) return "·";
  std::string text = short_label(cell.kind);
  if (const auto it = letters.find(cell.fingerprint); it != letters.end()) text += ":" + it->second;
  if (cell.status == Status::xfail) return "➖ x" + text;
  return (cell.is_new ? "❌ " : "⭕ ") + text;
}

}  // namespace

std::string render_markdown(const Report& input) {
  const Report report = one_row_per_version(input);  // one row per version when there are several
  std::map<std::string, std::string> letters;
  const auto groups = group_failures(report);
  for (const auto& g : groups) letters[g.fingerprint] = g.letter;
  std::map<std::pair<std::string, std::string>, const CellResult*> at;
  for (const auto& c : report.cells) at[{c.kernel, c.target}] = &c;

  const auto& env = report.environment;
  std::string out = fmt::format("### triton-portcheck {} · triton {}\n\n", report.tool_version,
                                env.contains("triton") ? env["triton"].value("version", "?") : "?");
  out += "| kernel |";
  for (const auto& t : report.targets) out += fmt::format(" {} |", md(t));
  out += "\n|---|";
  for (std::size_t i = 0; i < report.targets.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : report.rows) {
    out += fmt::format("| `{}` |", md(row));
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
  out += fmt::format("\n\n*{}*\n\n", md(std::string(kCompileOnlyDisclaimer)));
  for (const auto& g : groups) {
    const auto& first = *g.cells.front();
    std::string cells;
    for (const auto* c : g.cells)
      cells += (cells.empty() ? "" : ", ") + fmt::format("{} on {}", c->kernel, c->target);
    out += fmt::format("- **[{}] {}** in {}{}: {}  \n  {}\n", g.letter, to_string(first.kind),
                       first.stage, first.pass.empty() ? "" : " (" + first.pass + ")",
                       md(first.message), md(cells));
    if (!first.why.empty()) out += fmt::format("  *why:* {}\n", md(first.why));
    if (first.link.starts_with("https://")) out += fmt::format("  [upstream]({})\n", first.link);
  }
  for (const auto& f : report.baseline.fixed)
    out += fmt::format("- fixed since the baseline: `{}` on {}\n", md(f.row), md(f.target));
  return out;
}

std::string github_annotations(const Report& report, const std::filesystem::path& root) {
  std::string out;
  for (const auto& cell : report.cells) {
    if (!cell.is_new) continue;
    const auto& where = cell.error_source ? cell.error_source : cell.kernel_source;
    std::string properties;
    if (where && !where->file.empty()) {
      const auto path = util::relative_if_inside(where->file, root);
      properties = fmt::format("file={},line={},", command_property(path.string()), where->line);
    }
    const auto title = fmt::format("{} on {}: {} in {}", cell.kernel, cell.target,
                                   to_string(cell.kind), cell.stage);
    out += fmt::format("::error {}title={}::{}\n", properties, command_property(title),
                       command_data(cell.message));
  }
  return out;
}

}  // namespace portcheck
