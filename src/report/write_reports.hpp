#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/core/report.hpp"

namespace portcheck {

// Every report a run or `report` can write besides the terminal matrix.
struct ReportOutputs {
  std::optional<std::filesystem::path> json;
  std::optional<std::filesystem::path> junit;
  std::optional<std::filesystem::path> sarif;
  std::optional<std::filesystem::path> html;
  std::optional<std::filesystem::path> markdown;
  std::optional<std::filesystem::path> gitlab;
  std::optional<std::filesystem::path> write_baseline;
  bool github = false;  // annotations on stdout, Markdown appended to $GITHUB_STEP_SUMMARY
};

// One report file a run can write: its flag, its help text, where ReportOutputs keeps its path and
// how it is rendered. A new format is a renderer (one file in report/), a ReportOutputs member and
// one row of report_files(); the command line offers every row (cli/output_flags.cpp).
struct ReportFile {
  const char* flag;  // "--json"
  const char* help;
  std::optional<std::filesystem::path> ReportOutputs::*path;
  std::string (*render)(const Report& report);
  // The rendered text as it is written on standard output, which a CI log shows: made so that no
  // line of it runs as a workflow command, in the way its format allows.
  std::string (*for_a_log)(std::string_view text);
};

// In the order --help lists them; --write-baseline, the last, is listed after --baseline.
const std::vector<ReportFile>& report_files();

// Whether one of the reports is to be written on standard output ("-"): the terminal matrix
// then goes to standard error, so the report stays parseable.
bool writes_to_stdout(const ReportOutputs& outputs);

// Refuses, before anything compiles, a destination that cannot be written (UsageError).
void check_destinations(const ReportOutputs& outputs);

// One output file named by `flag`, checked before the run (UsageError): its folder may be missing
// (made by make_folder_for when it is written) but not a file or read-only; it may not be a
// folder itself.
void check_output_path(const std::optional<std::filesystem::path>& file, const char* flag);
// Makes the folder of an output file checked by check_output_path.
void make_folder_for(const std::filesystem::path& file);

// Writes each requested file (util::write_output_file: "-" is standard output; FIFOs and devices
// are written as they are; regular files through a temporary file and a rename, links followed).
// Returns one message per file that could not be written; the others are still written.
std::vector<std::string> write_reports(const Report& report, const ReportOutputs& outputs);

}  // namespace portcheck
