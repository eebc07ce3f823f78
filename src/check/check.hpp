#pragma once
// `check`: the matrix of a manifest's rows x targets x Triton environments. The pipeline runs in
// three stages, one file each: plan.hpp (rows x targets -> cells), execute.hpp (probe, inspect,
// serve from the cache or compile) and interpret.hpp (evidence -> a cell's verdict); this file
// only chooses the rows, validates the targets and runs one pass per Triton environment.
#include <atomic>

#include "src/check/check_options.hpp"
#include "src/core/report.hpp"

namespace portcheck {

// Runs the matrix and returns the report; throws UsageError or EnvironmentError before anything
// is compiled when the input or the environment is wrong.
Report run_check(const CheckOptions& options, const std::atomic<bool>& interrupted);

// 0: no new failures; 1: new failures; 130: interrupted.
int exit_code_for(const Report& report);

}  // namespace portcheck
