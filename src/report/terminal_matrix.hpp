#pragma once
#include <map>
#include <string>

#include "src/core/report.hpp"
#include "src/report/terminal.hpp"

namespace portcheck {

// The terminal's matrix: rows by targets, one label per cell, padded to its column and coloured
// by status; one block per Triton environment when a run checked several, in the order they ran.
// A kernel of many rows is one line of per-target summaries with its failing rows under it
// (kernel_rollup.hpp), unless style.expand.
std::string render_matrix(const Report& report, const std::map<std::string, std::string>& letters,
                          const TerminalStyle& style, bool* several_blocks = nullptr);

}  // namespace portcheck
