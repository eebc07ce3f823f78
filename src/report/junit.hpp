#pragma once
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

// JUnit XML: one testcase per cell (classname: the kernel row; name: target and Triton version),
// failures with the message and log, expected failures as skipped.
std::string render_junit(const Report& report);

}  // namespace portcheck
