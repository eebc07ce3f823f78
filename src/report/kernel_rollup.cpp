#include "src/report/kernel_rollup.hpp"

#include <array>
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
constexpr std::array<std::pair<Status, int>, 6> kSeverity{{
    {Status::ok, 0},
    {Status::unchecked, 0},
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
  std::size_t ok = 0, compiled = 0;
  std::set<std::string> failing_labels, failing_letters;
  for (const auto* cell : cells) {
    if (cell->status == Status::unchecked) continue;
    ++compiled;
    if (passed(*cell)) {
      ++ok;
      continue;
    }
    failing_labels.insert(cell_label(*cell, letters));
    const auto letter = letters.find(cell->fingerprint);
    failing_letters.insert(letter != letters.end() ? letter->second : "?");
  }
  if (compiled == 0) return "·" + left;
  const auto joined = util::join(std::vector(failing_letters.begin(), failing_letters.end()), ",");
  if (ok > 0)
    return fmt::format("ok {}/{}{}{}", ok, compiled + unfinished,
                       joined.empty() ? "" : " " + joined, left);
  return (failing_labels.size() == 1 ? *failing_labels.begin() : joined) + left;
}

Status rollup_status(const std::vector<const CellResult*>& cells) {
  Status worst = Status::ok;
  for (const auto* cell : cells)
    if (severity(cell->status) > severity(worst)) worst = cell->status;
  return worst;
}

}  // namespace portcheck
