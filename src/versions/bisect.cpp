#include "src/versions/bisect.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/versions/environments.hpp"
#include "util/strings.hpp"

namespace portcheck {

std::string ReleaseVerdict::key() const {
  if (refused()) return "refused";
  return fmt::format("{}|{}|{}|{}", to_string(cell.status), to_string(cell.kind), cell.stage,
                     cell.fingerprint);
}

std::string ReleaseVerdict::summary() const {
  if (refused()) return "refused";
  if (!cell.failed_outcome()) return to_string(cell.status);
  std::string out = to_string(cell.kind);
  if (!cell.stage.empty()) out += " in " + cell.stage;
  if (!cell.fingerprint.empty()) out += " [" + cell.fingerprint + "]";
  return out;
}

namespace {

// Asks for `release` only the rows that do not know it yet, and files the answers.
void probe(const std::string& release, const std::vector<std::string>& rows,
           std::vector<RowBisection>& searches, const VerdictsOf& verdicts_of) {
  std::vector<std::string> asked;
  for (const auto& row : rows) {
    const auto& search = *std::find_if(searches.begin(), searches.end(),
                                       [&](const RowBisection& s) { return s.row == row; });
    if (!search.known.contains(release)) asked.push_back(row);
  }
  if (asked.empty()) return;
  auto answers = verdicts_of(release, asked);
  for (auto& search : searches) {
    const auto it = answers.find(search.row);
    if (it != answers.end()) search.known.insert_or_assign(release, std::move(it->second));
  }
}

std::vector<RowBisection> searches_for(const std::vector<std::string>& rows) {
  std::vector<RowBisection> searches;
  searches.reserve(rows.size());
  for (const auto& row : rows) searches.push_back({row, {}, std::nullopt});
  return searches;
}

}  // namespace

std::vector<RowBisection> bisect_rows(const std::vector<std::string>& releases,
                                      const std::vector<std::string>& rows,
                                      const VerdictsOf& verdicts_of) {
  auto searches = searches_for(rows);
  if (releases.size() < 2) return searches;
  probe(releases.back(), rows, searches, verdicts_of);
  probe(releases.front(), rows, searches, verdicts_of);
  // [lo, hi]: lo has the first end's verdict, hi does not.
  std::map<std::string, std::pair<std::size_t, std::size_t>> open;
  for (const auto& s : searches) {
    const auto first = s.known.find(releases.front());
    const auto last = s.known.find(releases.back());
    if (first != s.known.end() && last != s.known.end() &&
        first->second.key() != last->second.key())
      open[s.row] = {0, releases.size() - 1};
  }
  while (!open.empty()) {
    std::map<std::size_t, std::vector<std::string>> wanted;  // release index -> rows
    for (const auto& [row, range] : open)
      if (range.second - range.first > 1) wanted[(range.first + range.second) / 2].push_back(row);
    if (wanted.empty()) break;
    for (const auto& [index, asking] : wanted) {
      probe(releases[index], asking, searches, verdicts_of);
      for (const auto& row : asking) {
        auto& search = *std::find_if(searches.begin(), searches.end(),
                                     [&](const RowBisection& s) { return s.row == row; });
        auto& range = open[row];
        const auto here = search.known.find(releases[index]);
        const bool as_first = here != search.known.end() &&
                              here->second.key() == search.known.at(releases.front()).key();
        (as_first ? range.first : range.second) = index;
      }
    }
  }
  for (auto& s : searches)
    if (const auto it = open.find(s.row); it != open.end())
      s.boundary = std::make_pair(releases[it->second.first], releases[it->second.second]);
  return searches;
}

std::vector<RowBisection> walk_all(const std::vector<std::string>& releases,
                                   const std::vector<std::string>& rows,
                                   const VerdictsOf& verdicts_of) {
  auto searches = searches_for(rows);
  for (const auto& release : releases) probe(release, rows, searches, verdicts_of);
  // The boundary bisect_rows would report: the first change from the first release's verdict.
  for (auto& s : searches) {
    for (std::size_t i = 1; i < releases.size() && !s.boundary; ++i) {
      const auto before = s.known.find(releases[i - 1]);
      const auto after = s.known.find(releases[i]);
      if (before == s.known.end() || after == s.known.end()) continue;
      if (before->second.key() != after->second.key())
        s.boundary = std::make_pair(releases[i - 1], releases[i]);
    }
  }
  return searches;
}

std::vector<std::string> releases_between(const std::vector<std::string>& offered,
                                          const std::string& from, const std::string& to,
                                          bool pre) {
  const auto find = [&](const std::string& end, const char* flag) {
    const auto it = std::find_if(offered.begin(), offered.end(),
                                 [&](const std::string& v) { return same_release(v, end); });
    if (it == offered.end()) {
      std::vector<std::string> finals;
      std::copy_if(offered.begin(), offered.end(), std::back_inserter(finals),
                   [&](const std::string& v) { return pre || !is_prerelease(v); });
      throw UsageError(
          fmt::format("{} {}: not a Triton release on the package index (it offers {})", flag, end,
                      util::join(finals, ", ")));
    }
    return static_cast<std::size_t>(it - offered.begin());
  };
  const auto first = find(from, "--from");
  const auto last = find(to, "--to");
  if (first >= last)
    throw UsageError(
        fmt::format("--from {} is not older than --to {}: nothing to bisect", from, to));
  std::vector<std::string> out;
  for (std::size_t i = first; i <= last; ++i)
    if (pre || !is_prerelease(offered[i]) || i == first || i == last) out.push_back(offered[i]);
  return out;
}

}  // namespace portcheck
