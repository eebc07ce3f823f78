#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "src/core/report.hpp"

namespace portcheck {

// A captured library has dozens of rows per kernel (2,201 rows for 66 kernels in one library's
// test suite), so the terminal shows such a kernel as one line per target summary, with only its
// failing rows listed under it; `--expand` shows every row.

// A kernel with more rows than this is rolled up unless the reader asked for every row.
inline constexpr std::size_t kRollupAbove = 4;

// The report's rows, consecutive rows of one kernel together, in report order. A row's kernel is
// its cells' base_kernel (a row without cells, in a shard, by its name before "[").
struct KernelRows {
  std::string kernel;
  std::vector<std::string> rows;
};
std::vector<KernelRows> rows_by_kernel(const Report& report);

// The cells of a rolled-up kernel on one target, as one label: "ok 40/40"; "ok 38/40 A,B" (the
// letters of the failing rows' groups); with no row ok, the failing rows' one label ("front:A")
// or their letters ("A,B"); "·" when nothing was compiled, "-" when there are no cells.
// `unfinished`: rows of an interrupted run with no cell here yet, said after the rest and
// counted in the total ("ok 49/108 (59 ?)"), so a partial rollup never reads as complete.
std::string rollup_label(const std::vector<const CellResult*>& cells,
                         const std::map<std::string, std::string>& letters,
                         std::size_t unfinished = 0);

// The status a rolled-up label is coloured as: the worst of its cells.
Status rollup_status(const std::vector<const CellResult*>& cells);

// The failing rows of a rolled-up kernel (a row with a failed cell on any target), grouped by
// their verdict on every target (status, kind, group): a failure shared by 512 rows is one line
// of the matrix, not 512.
struct AlikeRows {
  std::vector<std::string> rows;    // in report order: the first is the example shown
  std::vector<std::string> shared;  // facets of their variant names that every one of them has
                                    // and no passing row of the kernel has ("fp8e4nv")
};
using CellAt = std::function<const CellResult*(const std::string& row, const std::string& target)>;
std::vector<AlikeRows> failing_rows_alike(const KernelRows& kernel,
                                          const std::vector<std::string>& targets,
                                          const CellAt& cell_at);

// How a group is named in the matrix: the row itself for one row, else "512 rows (fp8e4nv),
// e.g. scale_rows[v769-fp8e4nv-b64-w1]".
std::string alike_rows_name(const AlikeRows& group);

}  // namespace portcheck
