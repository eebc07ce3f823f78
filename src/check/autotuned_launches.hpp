#pragma once
// The configs of an autotuned launch judged as Triton's autotuner runs them (issue 49).
//
// A row with `autotune = "NAME"` is one config that the launch NAME of its [[kernel]] benchmarks.
// `Autotuner._bench` gives a config whose benchmark raises one of the exceptions it catches
// (OutOfResources, CompileTimeAssertionFailure, and PTXASError from 3.3 on: the worker reads which
// from the installed release, compile/autotune_rules.py) no timing, and the launch runs the best of
// the others; any other exception reaches the user's call. So on each target and Triton:
//   - a config that fails with what the autotuner skips, in a launch that keeps another config
//     (one that compiles and launches, or one whose failure is raised anyway), is `skipped`;
//   - a config that fails with anything else stays red: the launch raises it;
//   - when every config fails with what the autotuner skips, nothing is left: the autotuner
//     launches one all the same and it raises, so all of them stay red.
// A row several launches benchmark is skipped only where each of them keeps another config.
#include <vector>

#include "src/core/cell.hpp"
#include "src/core/manifest.hpp"

namespace portcheck {

// Sets each autotuned config's `autotuned` and, where the autotuner skips it, its status to
// Status::skipped (not new). `cells` are one or more Triton environments' cells of `manifest`'s
// rows; a launch is judged per target and environment, among the cells present.
void judge_autotuned_launches(const Manifest& manifest, std::vector<CellResult>& cells);

// The rows of `manifest` that must be checked together (in one shard) because an autotuned launch
// joins them: for each row, the index of the first row of its group; a row in no launch is its own.
std::vector<std::size_t> autotune_companions(const Manifest& manifest);

}  // namespace portcheck
