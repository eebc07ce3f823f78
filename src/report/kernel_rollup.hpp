#pragma once
#include <cstddef>
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

}  // namespace portcheck
