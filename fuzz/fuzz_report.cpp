// The report/baseline JSON loader: any bytes given to `report`, `merge`, `diff` or --baseline are
// a report, a baseline or one UsageError; a report that loads renders in every format, merges
// and diffs without any other exception, crash or sanitizer finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/core/errors.hpp"
#include "src/core/shard.hpp"
#include "src/report/baseline.hpp"
#include "src/report/github.hpp"
#include "src/report/gitlab.hpp"
#include "src/report/html.hpp"
#include "src/report/json.hpp"
#include "src/report/junit.hpp"
#include "src/report/markdown.hpp"
#include "src/report/sarif.hpp"
#include "src/report/terminal.hpp"
#include "src/versions/diff.hpp"
#include "util/fs.hpp"

namespace {

using namespace portcheck;

void render_everything(Report report) {
  (void)render_terminal(report, TerminalStyle{true});
  (void)render_markdown(report);
  (void)github_annotations(report, "/src");
  (void)render_junit(report);
  (void)render_sarif(report).dump();
  (void)render_html(report);
  (void)render_gitlab_codequality(report, "/src");
  (void)report_to_json(report).dump();
  (void)baseline_to_json(report);
  for (const auto mode :
       {DiffSelection::Mode::runs, DiffSelection::Mode::versions, DiffSelection::Mode::targets}) {
    DiffSelection selection;
    selection.mode = mode;
    if (mode != DiffSelection::Mode::runs && !report.cells.empty()) {
      selection.a = mode == DiffSelection::Mode::targets ? report.cells.front().target
                                                         : report.cells.front().triton;
      selection.b = mode == DiffSelection::Mode::targets ? report.cells.back().target
                                                         : report.cells.back().triton;
    }
    try {
      (void)render_diff(diff_reports(report, report, selection, DiffOptions{}), false);
    } catch (const UsageError&) {
    }
  }
  try {
    render_terminal(merge_reports({report, report}, {"a.json", "b.json"}), TerminalStyle{false});
  } catch (const UsageError&) {
  }
  std::vector<BaselineEntry> baseline;
  for (const auto& c : report.cells)
    baseline.push_back({c.kernel, c.target, c.triton, c.fingerprint, to_string(c.kind), c.message});
  apply_baseline(report, baseline, "baseline.json");
  (void)render_sarif(report).dump();
  (void)render_terminal(report, TerminalStyle{false});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const util::TempDir dir("portcheck-fuzz-report");
  const auto file = dir.path() / "input.json";
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    render_everything(load_report(file));
  } catch (const UsageError&) {
  }
  try {
    (void)load_baseline(file);
  } catch (const UsageError&) {
  }
  return 0;
}
