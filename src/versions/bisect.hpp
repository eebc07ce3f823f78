#pragma once
// `triton-portcheck bisect`: the first Triton release where a cell's verdict changed. This file
// is the search alone, over an ordered list of releases and a function that gives the verdicts
// of some rows under one release; the command (src/cli/bisect_command.cpp) supplies that
// function with real compiles in version environments, and bisect_report.cpp renders the result.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/cell.hpp"

namespace portcheck {

// One row's cell under one release: what `check` found, or why that release refused the row
// before compiling it (an option field the release does not know: a verdict too).
struct ReleaseVerdict {
  std::string release;  // "3.8.0"
  std::string refusal;  // non-empty: the release refused the row, no cell
  CellResult cell;      // when not refused
  [[nodiscard]] bool refused() const { return !refusal.empty(); }
  // What has to differ for the verdict to have changed: status, failure kind, stage, fingerprint.
  [[nodiscard]] std::string key() const;
  // "ok", "frontend-error in frontend [547f998e6596]", "refused"
  [[nodiscard]] std::string summary() const;
};

// The verdicts of `rows` under `release`, row name -> verdict. Throws to abort the search.
using VerdictsOf = std::function<std::map<std::string, ReleaseVerdict>(
    const std::string& release, const std::vector<std::string>& rows)>;

struct RowBisection {
  std::string row;
  // Every verdict known for this row, by release (the two ends, the releases probed between).
  std::map<std::string, ReleaseVerdict> known;
  // The last release with the first end's verdict and the first without it; nullopt when the
  // two ends agree (no change found: there may still be changes that undo each other, which
  // only `--all` shows).
  std::optional<std::pair<std::string, std::string>> boundary;
};

// Binary search over `releases` (ordered, at least two: the first and last are the ends) for
// every row at once: each round asks `verdicts_of` once per release that some row needs next,
// with all the rows that need it, so rows share environments and compiles. With more than one
// change in the range the boundary found is one of them: the verdict before it is the first
// end's and the one after it is not.
std::vector<RowBisection> bisect_rows(const std::vector<std::string>& releases,
                                      const std::vector<std::string>& rows,
                                      const VerdictsOf& verdicts_of);

// Every release in turn (`--all`): the whole history of each row, in release order.
std::vector<RowBisection> walk_all(const std::vector<std::string>& releases,
                                   const std::vector<std::string>& rows,
                                   const VerdictsOf& verdicts_of);

// The releases of `offered` from `from` to `to` inclusive, in order; pre-releases only with
// `pre` (an end that is itself a pre-release stays). Throws UsageError naming an end that is not
// among them, with the releases that are.
std::vector<std::string> releases_between(const std::vector<std::string>& offered,
                                          const std::string& from, const std::string& to, bool pre);

}  // namespace portcheck
