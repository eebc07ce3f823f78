#pragma once
#include <map>
#include <string>

#include "src/report.hpp"

namespace portcheck {

struct TerminalStyle {
  bool colour = false;
};

// A cell as the matrix shows it: "ok", "xpass", "front:A", "xmlir:B" (letters by fingerprint).
std::string cell_label(const CellResult& cell, const std::map<std::string, std::string>& letters);

// "81 cells: 63 ok, 18 failed (18 new) · slowest compile ... · wall ...", as every format shows it.
std::string summary_line(const Report& report);

// The matrix, one footnote per failure group, and the summary line.
std::string render_terminal(const Report& report, const TerminalStyle& style);

}  // namespace portcheck
