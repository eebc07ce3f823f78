#pragma once
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

// One self-contained HTML file (no network): the matrix in colour, a detail panel per cell,
// filters by kernel, target and status. Every piece of compiler or user text is escaped.
std::string render_html(const Report& report);

}  // namespace portcheck
