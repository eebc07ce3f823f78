#include "src/report/grouping.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace portcheck {
namespace {

// A, B, ..., Z, then AA, AB, ...
std::string group_letter(std::size_t n) {
  return n < 26 ? std::string(1, static_cast<char>('A' + n))
                : fmt::format("{}{}", static_cast<char>('A' + n / 26 - 1),
                              static_cast<char>('A' + n % 26));
}

}  // namespace

Report one_row_per_version(const Report& report) {
  std::vector<std::pair<std::string, std::string>> versions;  // label, version, in run order
  for (const auto& c : report.cells)
    if (std::none_of(versions.begin(), versions.end(),
                     [&](const auto& v) { return v.first == c.triton; }))
      versions.emplace_back(c.triton, c.triton_version);
  if (versions.size() < 2) return report;
  Report out = report;
  out.rows.clear();
  for (const auto& row : report.rows)
    for (const auto& [label, version] : versions)
      out.rows.push_back(fmt::format("{} · triton {}", row, version));
  for (auto& c : out.cells) c.kernel = fmt::format("{} · triton {}", c.kernel, c.triton_version);
  return out;
}

std::vector<FailureGroup> group_failures(const Report& report) {
  // The failed cells of each (row, target), in report order: matrix order is then one lookup per
  // position, not a scan of every cell.
  std::map<std::pair<std::string_view, std::string_view>, std::vector<const CellResult*>> failed_at;
  for (const auto& cell : report.cells)
    if (cell.failed_outcome()) failed_at[{cell.kernel, cell.target}].push_back(&cell);
  std::vector<FailureGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& row : report.rows)
    for (const auto& target : report.targets) {
      const auto at = failed_at.find({row, target});
      if (at == failed_at.end()) continue;
      for (const auto* cell : at->second) {
        auto [it, inserted] = index.emplace(cell->fingerprint, groups.size());
        if (inserted) groups.push_back({group_letter(groups.size()), cell->fingerprint, {}});
        groups[it->second].cells.push_back(cell);
      }
    }
  return groups;
}

}  // namespace portcheck
