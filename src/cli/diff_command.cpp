// `triton-portcheck diff`: two Triton versions or two targets of one report, or two reports.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/report/json.hpp"
#include "src/report/terminal_text.hpp"
#include "src/versions/diff.hpp"
#include "util/strings.hpp"
#include "util/term.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {
namespace {

struct DiffFlags {
  std::vector<std::string> inputs, versions, targets, fail_on;
  DiffOptions options;
  std::string ir_stage;
};

// Which cells are compared: two reports cell by cell, or two labels or targets of one.
DiffSelection selection_of(const DiffFlags& f) {
  DiffSelection selection;
  if (f.inputs.size() == 2) {
    if (!f.versions.empty() || !f.targets.empty())
      throw UsageError(
          "diff: two reports are compared cell by cell; --versions and --targets take one report");
    selection.mode = DiffSelection::Mode::runs;
    selection.a = f.inputs[0];
    selection.b = f.inputs[1];
  } else if (f.versions.size() == 2) {
    selection.mode = DiffSelection::Mode::versions;
    selection.a = f.versions[0];
    selection.b = f.versions[1];
  } else if (f.targets.size() == 2) {
    selection.mode = DiffSelection::Mode::targets;
    selection.a = f.targets[0];
    selection.b = f.targets[1];
  } else {
    throw UsageError(
        "diff: give two reports, or one report with --versions OLD NEW or --targets OLD NEW");
  }
  return selection;
}

// The normalised IR diff, at one stage, of every pair that did not stay the same.
std::string render_ir_diff(const Report& old_report, const Report& new_report,
                           const DiffResult& result, const std::string& stage) {
  if (std::find(ir_stages().begin(), ir_stages().end(), stage) == ir_stages().end())
    throw UsageError(fmt::format("--ir {}: not a saved stage (one of {})", stage,
                                 util::join(ir_stages(), ", ")));
  const auto old_dir = saved_ir_dir(old_report);
  const auto new_dir = saved_ir_dir(new_report);
  if (!old_dir || !new_dir)
    return "no IR to compare: run check with --save-ir DIR to keep it (the report records where)\n";
  std::string out;
  for (const auto* list : {&result.regressed, &result.fixed, &result.fail_differently,
                           &result.changed, &result.slower})
    for (const auto& change : *list)
      out += diff_cell_ir(change, *old_dir, *new_dir, {{stage}, true});
  return out.empty() ? fmt::format("no {} differences in the changed cells\n", stage) : out;
}

int run_diff(const DiffFlags& f) {
  const auto selection = selection_of(f);
  const auto old_report = load_report(f.inputs[0]);
  const auto new_report = f.inputs.size() == 2 ? load_report(f.inputs[1]) : old_report;
  const auto result = diff_reports(old_report, new_report, selection, f.options);
  // Validates --fail-on before anything is printed.
  const int code = diff_exit_code(result, split_list(f.fail_on));
  // What is shown: the reports' names and messages with their control characters escaped, and
  // no line a CI log would run as a command (as the matrix, report/terminal_text.hpp).
  const auto shown = diff_reports(printable_report(old_report), printable_report(new_report),
                                  selection, f.options);
  std::fputs(util::no_workflow_commands(render_diff(shown, util::use_colour(stdout))).c_str(),
             stdout);
  if (!f.ir_stage.empty())
    std::fputs(render_ir_diff(old_report, new_report, result, f.ir_stage).c_str(), stdout);
  return code;
}

void add_diff_options(CLI::App* diff, DiffFlags& f) {
  diff->add_option("reports", f.inputs, "One JSON report (with --versions or --targets) or two")
      ->required()
      ->expected(1, 2);
  diff->add_option("--versions", f.versions, "Two Triton labels of one report: old new")
      ->expected(2);
  diff->add_option("--targets", f.targets, "Two targets of one report: old new")->expected(2);
  diff->add_option("--time-threshold", f.options.time_ratio,
                   "Slower to compile: at least this ratio (default 1.5)");
  diff->add_option("--time-min", f.options.time_min_seconds,
                   "... and at least this many seconds more (default 0.5)");
  diff->add_option("--size-threshold", f.options.size_threshold,
                   "Size and metadata changes from this fraction (default 0.05)");
  diff->add_option("--fail-on", f.fail_on,
                   "Exit 1 when any of these is found: regressed,slower,changed,...");
  diff->add_option("--ir", f.ir_stage,
                   "Also show the normalised IR diff of changed cells at this stage (ttgir, ...)");
}

}  // namespace

Command add_diff_command(CLI::App& app) {
  auto flags = std::make_shared<DiffFlags>();
  auto* diff = app.add_subcommand(
      "diff", "Compare Triton versions or targets in one report, or two reports");
  add_diff_options(diff, *flags);
  diff->footer(kExitCodes);
  return {diff, [flags] { return run_diff(*flags); }};
}

}  // namespace portcheck::cli
