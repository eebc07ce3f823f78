#include "src/cli/output_flags.hpp"

#include <cstdio>

#include "src/check/check.hpp"
#include "src/core/errors.hpp"
#include "src/report/terminal.hpp"
#include "util/term.hpp"

namespace portcheck::cli {

void add_output_flags(CLI::App* command, OutputFlags& flags) {
  command->add_option("--json", flags.outputs.json,
                      "Write the JSON report (docs/report-schema.md) to FILE");
  command->add_option("--junit", flags.outputs.junit,
                      "Write JUnit XML (one testcase per cell) to FILE");
  command->add_option("--sarif", flags.outputs.sarif,
                      "Write SARIF 2.1.0 (one result per failing cell) to FILE");
  command->add_option("--html", flags.outputs.html, "Write a self-contained HTML report to FILE");
  command->add_option("--markdown", flags.outputs.markdown, "Write the matrix as Markdown to FILE");
  command->add_flag("--github", flags.outputs.github,
                    "GitHub Actions: ::error annotations for new failures, the matrix appended to "
                    "$GITHUB_STEP_SUMMARY");
  command->add_option(
      "--baseline", flags.baseline,
      "Only failures absent from FILE (a --write-baseline file or any JSON report) are new");
  command->add_option("--write-baseline", flags.outputs.write_baseline,
                      "Record today's failures in FILE");
}

std::vector<BaselineEntry> baseline_entries(const OutputFlags& flags) {
  return flags.baseline ? load_baseline(*flags.baseline) : std::vector<BaselineEntry>{};
}

int finish(Report report, const OutputFlags& flags, const std::vector<BaselineEntry>& baseline) {
  if (flags.baseline) apply_baseline(report, baseline, flags.baseline->string());
  FILE* matrix = writes_to_stdout(flags.outputs) ? stderr : stdout;  // the report owns stdout
  std::fputs(render_terminal(report, TerminalStyle{util::use_colour(matrix)}).c_str(), matrix);
  std::fflush(matrix);
  int code = exit_code_for(report);
  for (const auto& error : write_reports(report, flags.outputs)) {
    std::fprintf(stderr, "triton-portcheck: %s\n", error.c_str());
    code = exit_code::environment;
  }
  return code;
}

}  // namespace portcheck::cli
