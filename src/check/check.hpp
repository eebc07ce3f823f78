#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/check/check_options.hpp"
#include "src/core/report.hpp"

namespace portcheck {

// Runs the matrix and returns the report; throws UsageError or EnvironmentError before anything
// is compiled when the input or the environment is wrong.
Report run_check(const CheckOptions& options, const std::atomic<bool>& interrupted);

// 0: no new failures; 1: new failures; 130: interrupted.
int exit_code_for(const Report& report);

}  // namespace portcheck
