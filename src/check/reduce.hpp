#pragma once
// `check --reduce`: a captured library has dozens of rows per kernel that differ only in facets
// that rarely decide whether a kernel compiles for a target. Rows alike in everything else form a
// group; the first row of a group is compiled on each target and stands for the others, which
// are reported with its verdict (judged against their own xfail lists) and named as represented
// by it. Element types, constexpr values and every compile option (num_warps, num_stages,
// num_ctas, ...) stay in the key: they do decide. bench/reduce_recall.py measures what the
// grouping misses against the exhaustive run.
#include <cstddef>
#include <string>
#include <vector>

#include "src/check/plan.hpp"
#include "src/core/manifest.hpp"

namespace portcheck {

// What a row's compile depends on once the facets grouped away are dropped: an argument's
// divisibility annotation (":16" on "*fp32:16" or "i32:16").
std::string reduction_key(const KernelRow& row);

// For each cell, the index in `cells` of the cell that stands for it: the first cell of the same
// reduction key, target and Triton environment; its own index when it is that first cell.
std::vector<std::size_t> representatives(const std::vector<PlannedCell>& cells);

}  // namespace portcheck
