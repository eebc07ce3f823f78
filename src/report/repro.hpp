#pragma once
#include <string>
#include <string_view>

#include "src/core/cell.hpp"

namespace portcheck {

// The `triton-portcheck repro` command that writes a standalone reproducer of `cell`, as the
// reports show it for a failing cell; empty when its kind involves no compile that a reproducer
// could replay (import-error, internal-error, predicted, unsupported-target, ok). `manifest` is
// what the report records of the run (Report::manifest): "--demo", the manifest's path, or empty
// when unknown. Every word taken from the report is shell-quoted when it needs to be.
std::string repro_command(const CellResult& cell, std::string_view manifest);

}  // namespace portcheck
