#include "src/report/write_reports.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/report/baseline.hpp"
#include "src/report/html.hpp"
#include "src/report/json.hpp"
#include "src/report/junit.hpp"
#include "src/report/markdown.hpp"
#include "src/report/sarif.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

void check_writable(const std::optional<std::filesystem::path>& file, const char* flag) {
  if (!file || util::is_standard_output(*file)) return;
  if (util::is_special_file(*file)) {
    // A FIFO or a device is written as it is: it must be writable, not its folder.
    if (::access(file->c_str(), W_OK) != 0)
      throw UsageError(fmt::format("{} {}: is not writable", flag, file->string()));
    return;
  }
  std::filesystem::path target;
  try {
    target = util::resolve_links(*file);
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("{} {}", flag, e.what()));
  }
  std::error_code ec;
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(
        fmt::format("{} {}: the folder {} does not exist", flag, file->string(), dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{} {}: the folder {} is not writable", flag, file->string(), dir.string()));
  if (std::filesystem::is_directory(*file, ec))
    throw UsageError(fmt::format("{} {}: is a folder, not a file", flag, file->string()));
}

std::filesystem::path workspace_root() {
  if (const char* ws = std::getenv("GITHUB_WORKSPACE"); ws && *ws) return ws;
  std::error_code ec;
  return std::filesystem::current_path(ec);
}

}  // namespace

bool writes_to_stdout(const ReportOutputs& outputs) {
  for (const auto* file : {&outputs.json, &outputs.junit, &outputs.sarif, &outputs.html,
                           &outputs.markdown, &outputs.write_baseline})
    if (*file && util::is_standard_output(**file)) return true;
  return false;
}

void check_destinations(const ReportOutputs& outputs) {
  int on_stdout = 0;
  for (const auto* file : {&outputs.json, &outputs.junit, &outputs.sarif, &outputs.html,
                           &outputs.markdown, &outputs.write_baseline})
    on_stdout += *file && util::is_standard_output(**file) ? 1 : 0;
  if (on_stdout > 1) throw UsageError("only one report can be written to standard output ('-')");
  if (on_stdout > 0 && outputs.github)
    throw UsageError("--github writes annotations on standard output: no report can go there too");
  check_writable(outputs.json, "--json");
  check_writable(outputs.junit, "--junit");
  check_writable(outputs.sarif, "--sarif");
  check_writable(outputs.html, "--html");
  check_writable(outputs.markdown, "--markdown");
  check_writable(outputs.write_baseline, "--write-baseline");
}

std::vector<std::string> write_reports(const Report& report, const ReportOutputs& outputs) {
  std::vector<std::string> errors;
  const auto write = [&](const std::optional<std::filesystem::path>& file,
                         const std::function<std::string()>& render) {
    if (!file) return;
    try {
      util::write_output_file(*file, render());
    } catch (const std::exception& e) {
      errors.emplace_back(e.what());
    }
  };
  write(outputs.json, [&] { return report_to_json(report).dump(2) + "\n"; });
  write(outputs.junit, [&] { return render_junit(report); });
  write(outputs.sarif, [&] { return render_sarif(report).dump(2) + "\n"; });
  write(outputs.html, [&] { return render_html(report); });
  write(outputs.markdown, [&] { return render_markdown(report); });
  write(outputs.write_baseline, [&] { return baseline_to_json(report); });
  if (outputs.github) {
    std::fputs(github_annotations(report, workspace_root()).c_str(), stdout);
    std::fflush(stdout);
    // The step summary is one file for the whole job: append, as GitHub documents.
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
      std::ofstream out(summary, std::ios::app);
      out << render_markdown(report) << "\n";
      if (!out)
        errors.push_back(fmt::format("cannot append to $GITHUB_STEP_SUMMARY ({})", summary));
    }
  }
  return errors;
}

}  // namespace portcheck
