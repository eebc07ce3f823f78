#include "src/report/grouping.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace portcheck {

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
  std::vector<FailureGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& row : report.rows)
    for (const auto& target : report.targets)
      for (const auto& cell : report.cells) {
        if (cell.kernel != row || cell.target != target || !cell.failed_outcome()) continue;
        auto [it, inserted] = index.emplace(cell.fingerprint, groups.size());
        if (inserted) {
          const auto n = groups.size();
          std::string letter = n < 26 ? std::string(1, static_cast<char>('A' + n))
                                      : fmt::format("{}{}", static_cast<char>('A' + n / 26 - 1),
                                                    static_cast<char>('A' + n % 26));
          groups.push_back({letter, cell.fingerprint, {}});
        }
        groups[it->second].cells.push_back(&cell);
      }
  return groups;
}

}  // namespace portcheck
