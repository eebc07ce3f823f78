#include "src/report/github.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "util/fs.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

// The runner's escapes (actions/runner ActionCommand: _escapeDataMappings and
// _escapePropertyMappings); '%' too, so an escape in the text stays text.
struct Escape {
  char c;
  std::string_view as;
};
constexpr std::array<Escape, 3> kData = {{{'%', "%25"}, {'\r', "%0D"}, {'\n', "%0A"}}};
constexpr std::array<Escape, 5> kProperty = {
    {{'%', "%25"}, {'\r', "%0D"}, {'\n', "%0A"}, {':', "%3A"}, {',', "%2C"}}};

// `text` with its control characters shown (tab and newline kept), then escaped by `table`.
template <std::size_t N>
std::string escaped(const std::string& text, const std::array<Escape, N>& table) {
  std::string out;
  for (const char c : util::printable(text, util::Newlines::keep)) {
    const auto* hit =
        std::find_if(table.begin(), table.end(), [c](const Escape& e) { return e.c == c; });
    if (hit != table.end())
      out += hit->as;
    else
      out += c;
  }
  return out;
}

std::string command_data(const std::string& text) { return escaped(text, kData); }
std::string command_property(const std::string& text) { return escaped(text, kProperty); }

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
  // Skipped configs are information: one notice for all (GitHub shows few notices per step).
  const auto skipped =
      std::count_if(report.cells.begin(), report.cells.end(),
                    [](const CellResult& c) { return c.status == Status::skipped; });
  if (skipped > 0)
    out += fmt::format(
        "::notice title={}::{}\n", command_property("triton-portcheck: autotuned configs skipped"),
        command_data(fmt::format("{} config(s) of autotuned launches fail on their target with "
                                 "what Triton's autotuner skips; the launches run the configs that "
                                 "remain (not failures: see the report)",
                                 skipped)));
  return out;
}

}  // namespace portcheck
