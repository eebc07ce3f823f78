#include "src/report/github.hpp"

#include <fmt/format.h>

#include "util/fs.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

// The runner's escapes (actions/runner ActionCommand: _escapeDataMappings and
// _escapePropertyMappings); '%' first, so an escape in the text stays text.
std::string command_data(const std::string& text) {
  std::string out;
  for (const char c : util::printable(text, util::Newlines::keep)) {
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

}  // namespace

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
