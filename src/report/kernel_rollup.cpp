#include "src/report/kernel_rollup.hpp"

#include <array>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "src/report/terminal.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

bool passed(const CellResult& cell) {
  return cell.status == Status::ok || cell.status == Status::xpass;
}

// How bad a status is, for colouring a summary by its worst cell.
constexpr std::array<std::pair<Status, int>, 7> kSeverity{{
    {Status::ok, 0},
    {Status::unchecked, 0},
    {Status::skipped, 1},
    {Status::xpass, 1},
    {Status::xfail, 2},
    {Status::failed, 3},
    {Status::launch, 3},
}};

int severity(Status status) {
  for (const auto& [s, rank] : kSeverity)
    if (s == status) return rank;
  return 0;
}

}  // namespace

std::vector<KernelRows> rows_by_kernel(const Report& report) {
  std::map<std::string_view, std::string_view> kernel_of;
  for (const auto& cell : report.cells) kernel_of.emplace(cell.kernel, cell.base_kernel);
  std::vector<KernelRows> out;
  for (const auto& row : report.rows) {
    const auto it = kernel_of.find(row);
    const std::string kernel(it != kernel_of.end() && !it->second.empty()
                                 ? it->second
                                 : std::string_view(row).substr(0, row.find('[')));
    if (out.empty() || out.back().kernel != kernel) out.push_back({kernel, {}});
    out.back().rows.push_back(row);
  }
  return out;
}

std::string rollup_label(const std::vector<const CellResult*>& cells,
                         const std::map<std::string, std::string>& letters,
                         std::size_t unfinished) {
  const std::string left = unfinished > 0 ? fmt::format(" ({} ?)", unfinished) : "";
  if (cells.empty()) return unfinished > 0 ? left.substr(1) : "-";
  std::size_t ok = 0, compiled = 0, skipped = 0;
  std::set<std::string> failing_labels, failing_letters;
  for (const auto* cell : cells) {
    if (cell->status == Status::unchecked) continue;
    ++compiled;
    if (passed(*cell)) {
      ++ok;
      continue;
    }
    if (cell->status == Status::skipped) {  // neither ok nor failing: the autotuner's to skip
      ++skipped;
      continue;
    }
    failing_labels.insert(cell_label(*cell, letters));
    const auto letter = letters.find(cell->fingerprint);
    failing_letters.insert(letter != letters.end() ? letter->second : "?");
  }
  if (compiled == 0) return "·" + left;
  const auto joined = util::join(std::vector(failing_letters.begin(), failing_letters.end()), ",");
  const std::string skips = skipped > 0 ? fmt::format(" skip {}", skipped) : "";
  if (ok > 0 || (skipped > 0 && joined.empty()))
    return fmt::format("ok {}/{}{}{}{}", ok, compiled + unfinished, skips,
                       joined.empty() ? "" : " " + joined, left);
  return (failing_labels.size() == 1 ? *failing_labels.begin() : joined) + left;
}

namespace {

// What a row's cell on one target is, as far as grouping goes.
std::string verdict_key(const CellResult* cell) {
  if (cell == nullptr) return "-";
  return fmt::format("{}|{}|{}|{}", to_string(cell->status), to_string(cell->kind),
                     cell->fingerprint, cell->foreign_launch_verdict() ? "?" : "");
}

// A row's variant name split at '-', the way capture joins what tells rows apart.
std::set<std::string> facets_of(const std::string& row) {
  const auto open = row.find('[');
  if (open == std::string::npos || row.back() != ']') return {};
  std::set<std::string> out;
  for (auto& part : util::split(std::string_view(row).substr(open + 1, row.size() - open - 2), '-'))
    if (!part.empty()) out.insert(part);
  return out;
}

std::vector<std::string> shared_facets(const std::vector<std::string>& rows,
                                       const std::set<std::string>& of_passing_rows) {
  auto shared = facets_of(rows.front());
  for (const auto& row : rows) {
    const auto mine = facets_of(row);
    std::erase_if(shared, [&](const std::string& facet) { return mine.count(facet) == 0; });
  }
  std::erase_if(shared, [&](const std::string& f) { return of_passing_rows.count(f) != 0; });
  return {shared.begin(), shared.end()};
}

}  // namespace

std::vector<AlikeRows> failing_rows_alike(const KernelRows& kernel,
                                          const std::vector<std::string>& targets,
                                          const CellAt& cell_at) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> rows_by_key;
  std::set<std::string> passing_facets;
  for (const auto& row : kernel.rows) {
    std::string key;
    bool failing = false;
    for (const auto& target : targets) {
      const auto* cell = cell_at(row, target);
      failing = failing || (cell != nullptr && cell->failed_outcome());
      key += verdict_key(cell) + "\n";
    }
    if (!failing) {
      const auto facets = facets_of(row);
      passing_facets.insert(facets.begin(), facets.end());
      continue;
    }
    auto& rows = rows_by_key[key];
    if (rows.empty()) order.push_back(key);
    rows.push_back(row);
  }
  std::vector<AlikeRows> out;
  for (const auto& key : order) {
    auto& rows = rows_by_key[key];
    out.push_back(
        {rows, rows.size() > 1 ? shared_facets(rows, passing_facets) : std::vector<std::string>{}});
  }
  return out;
}

std::string alike_rows_name(const AlikeRows& group) {
  if (group.rows.size() == 1) return group.rows.front();
  const auto shared = group.shared.empty() ? "" : " (" + util::join(group.shared, " ") + ")";
  return fmt::format("{} rows{}, e.g. {}", group.rows.size(), shared, group.rows.front());
}

Status rollup_status(const std::vector<const CellResult*>& cells) {
  Status worst = Status::ok;
  for (const auto* cell : cells)
    if (severity(cell->status) > severity(worst)) worst = cell->status;
  return worst;
}

}  // namespace portcheck
