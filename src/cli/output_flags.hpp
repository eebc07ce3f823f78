#pragma once
// The flags every command that produces a report shares (the formats, the baseline), and the
// end of such a command: the matrix printed, the files written, the exit code.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/core/report.hpp"
#include "src/report/baseline.hpp"
#include "src/report/write_reports.hpp"

namespace portcheck::cli {

struct OutputFlags {
  ReportOutputs outputs;
  std::optional<std::filesystem::path> baseline;
  bool expand = false;  // the terminal matrix with every row (no kernel rolled up)
  // --fail-on: "new" (exit 1 on new failures) or "none"; unset, "new", except when the run
  // writes a baseline, which records failures rather than judging them.
  std::optional<std::string> fail_on;
  bool quiet = false;  // report, merge: the summary line (and the disclaimer) instead of the matrix
};

void add_output_flags(CLI::App* command, OutputFlags& flags);
// -q for a command that reads reports (report, merge): they have no progress line to turn off,
// so it leaves the summary line alone on the terminal, as capture's -q does.
void add_quiet_flag(CLI::App* command, OutputFlags& flags);

// The entries of --baseline FILE; none without the flag.
std::vector<BaselineEntry> baseline_entries(const OutputFlags& flags);

// Prints the matrix and writes the requested files; the exit code follows the report.
// Prints the first cell file (--save-ir, export) the run could not write, with how many others
// and what to do, on stderr; true when there was one (exit 3: an environment problem).
bool print_output_errors(const Report& report);

int finish(Report report, const OutputFlags& flags, const std::vector<BaselineEntry>& baseline);

}  // namespace portcheck::cli
