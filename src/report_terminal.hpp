#pragma once
#include <string>

#include "src/report.hpp"

namespace portcheck {

struct TerminalStyle {
  bool colour = false;
};

// The matrix, one footnote per failure group, and the summary line.
std::string render_terminal(const Report& report, const TerminalStyle& style);

}  // namespace portcheck
