#pragma once
#include <map>
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

struct TerminalStyle {
  bool colour = false;
  bool expand = false;  // every row of every kernel, none rolled up (kernel_rollup.hpp)
};

// A cell as the matrix shows it: "ok", "xpass", "front:A", "xmlir:B" (letters by fingerprint).
std::string cell_label(const CellResult& cell, const std::map<std::string, std::string>& letters);

// "81 cells: 63 ok, 18 failed (18 new) · slowest compile ... · wall ...", as every format shows it.
std::string summary_line(const Report& report);

// A path under the current folder reads better, and copies better, relative to it; any other path
// (or any path, when the current folder is unknown) is returned as it is.
std::string display_path(const std::string& file);

// Where a failed cell failed, as the CI formats (JUnit, SARIF) say it: "in pass P (stage S)", or
// "in stage S" ("in stage ?" when the stage is unknown).
std::string failure_where(const CellResult& cell);

// "KIND in stage S: message", the one-line description of a failed cell in the CI formats.
std::string describe_failure(const CellResult& cell);

// The matrix, one footnote per failure group, and the summary line.
std::string render_terminal(const Report& report, const TerminalStyle& style);

}  // namespace portcheck
