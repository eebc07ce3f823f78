#include "src/cli/output_flags.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "src/check/check.hpp"
#include "src/core/errors.hpp"
#include "src/report/terminal.hpp"
#include "util/term.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {

void add_output_flags(CLI::App* command, OutputFlags& flags) {
  const auto& files = report_files();
  for (const auto& format : files)
    if (format.path != &ReportOutputs::write_baseline)
      command->add_option(format.flag, flags.outputs.*format.path, format.help);
  command->add_flag("--github", flags.outputs.github,
                    "GitHub Actions: ::error annotations for new failures, the matrix appended to "
                    "$GITHUB_STEP_SUMMARY");
  command->add_option(
      "--baseline", flags.baseline,
      "Only failures absent from FILE (a --write-baseline file or any JSON report) are new");
  command->add_option("--write-baseline", flags.outputs.write_baseline,
                      std::string(files.back().help) +
                          "; recording is a success: exit 0 even with failures, unless --fail-on "
                          "is given");
  command
      ->add_option("--fail-on", flags.fail_on,
                   "new: exit 1 when a failure is new (not in --baseline; the default, except "
                   "with --write-baseline); none: failures never make the exit code non-zero")
      ->check(CLI::IsMember({"new", "none"}));
  command->add_flag("--expand", flags.expand,
                    "Show every row in the terminal matrix: a kernel of more than 4 rows is "
                    "otherwise one line of per-target summaries with its failing rows under it");
}

void add_quiet_flag(CLI::App* command, OutputFlags& flags) {
  command->add_flag("-q,--quiet", flags.quiet, "Only warnings and the summary line, no matrix");
}

std::vector<BaselineEntry> baseline_entries(const OutputFlags& flags) {
  return flags.baseline ? load_baseline(*flags.baseline) : std::vector<BaselineEntry>{};
}

bool print_output_errors(const Report& report) {
  const std::string* first = nullptr;
  std::size_t count = 0;
  for (const auto& cell : report.cells) {
    if (cell.output_error.empty()) continue;
    if (first == nullptr) first = &cell.output_error;
    ++count;
  }
  if (first == nullptr) return false;
  std::fprintf(stderr,
               "triton-portcheck: %s%s: free space there or choose a folder you can write to\n",
               util::printable(*first).c_str(),
               count > 1 ? fmt::format(" (and {} more cells)", count - 1).c_str() : "");
  return true;
}

int finish(Report report, const OutputFlags& flags, const std::vector<BaselineEntry>& baseline) {
  if (flags.baseline) apply_baseline(report, baseline, flags.baseline->string());
  FILE* matrix = writes_to_stdout(flags.outputs) ? stderr : stdout;  // the report owns stdout
  const TerminalStyle style{util::use_colour(matrix), flags.expand};
  // -q: the summary line, and what a passing cell means, which every output says.
  const auto shown = flags.quiet
                         ? fmt::format("{}\n{}\n", summary_line(report), kCompileOnlyDisclaimer)
                         : render_terminal(report, style);
  std::fputs(shown.c_str(), matrix);
  std::fflush(matrix);
  int code = print_output_errors(report) ? exit_code::environment : exit_code_for(report);
  const auto fail_on = flags.fail_on.value_or(flags.outputs.write_baseline ? "none" : "new");
  if (code == exit_code::new_failures && fail_on == "none") code = exit_code::ok;
  for (const auto& error : write_reports(report, flags.outputs)) {
    std::fprintf(stderr, "triton-portcheck: %s\n", error.c_str());
    code = exit_code::environment;
  }
  return code;
}

}  // namespace portcheck::cli
