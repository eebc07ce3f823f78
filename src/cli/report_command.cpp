// `report` and `merge`: saved JSON reports rendered again, or the reports of --shard runs combined.
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/cli/output_flags.hpp"
#include "src/core/shard.hpp"
#include "src/report/json.hpp"

namespace portcheck::cli {
namespace {

struct ReportFlags {
  std::filesystem::path input;
  OutputFlags outputs;
};

struct MergeFlags {
  std::vector<std::string> inputs;
  std::filesystem::path output;
  bool allow_missing_shards = false;
  OutputFlags outputs;
};

int run_report_command(const ReportFlags& f) {
  check_destinations(f.outputs.outputs);
  const auto baseline = baseline_entries(f.outputs);
  return finish(load_report(f.input), f.outputs, baseline);
}

int run_merge_command(const MergeFlags& f) {
  OutputFlags with_output = f.outputs;
  with_output.outputs.json = f.output;
  check_destinations(with_output.outputs);
  std::vector<Report> parts;
  for (const auto& file : f.inputs) parts.push_back(load_report(file));
  const auto baseline = baseline_entries(f.outputs);
  return finish(merge_reports(parts, f.inputs, f.allow_missing_shards), with_output, baseline);
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto flags = std::make_shared<ReportFlags>();
  auto* report =
      app.add_subcommand("report", "Render a saved JSON report (or a merged one) in any format");
  report->add_option("report", flags->input, "A JSON report written by check --json or merge")
      ->required();
  add_output_flags(report, flags->outputs);
  add_quiet_flag(report, flags->outputs);
  report->footer(kExitCodes);
  return {report, [flags] { return run_report_command(*flags); }};
}

Command add_merge_command(CLI::App& app) {
  auto flags = std::make_shared<MergeFlags>();
  auto* merge = app.add_subcommand("merge", "Combine the JSON reports of --shard runs into one");
  merge->add_option("reports", flags->inputs, "JSON reports of the shards")->required();
  merge->add_option("-o,--output", flags->output, "The merged JSON report")->required();
  merge->add_flag("--allow-missing-shards", flags->allow_missing_shards,
                  "Merge an incomplete --shard set: the missing shards' cells are unchecked (?) "
                  "and exit 1 unless --fail-on none; without it a missing shard is exit 2");
  add_output_flags(merge, flags->outputs);
  add_quiet_flag(merge, flags->outputs);
  merge->footer(kExitCodes);
  return {merge, [flags] { return run_merge_command(*flags); }};
}

}  // namespace portcheck::cli
