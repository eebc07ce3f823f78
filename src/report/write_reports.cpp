#include "src/report/write_reports.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/report/baseline.hpp"
#include "src/report/github.hpp"
#include "src/report/gitlab.hpp"
#include "src/report/html.hpp"
#include "src/report/json.hpp"
#include "src/report/junit.hpp"
#include "src/report/markdown.hpp"
#include "src/report/sarif.hpp"
#include "util/fs.hpp"
#include "util/text_escape.hpp"

namespace portcheck {

void check_output_path(const std::optional<std::filesystem::path>& file, const char* flag) {
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
  // A missing folder is made when the report is written (make_folder_for), as capture -o does;
  // what must hold now is that the nearest folder that exists can take it. Absolute first: the
  // folders above a relative "build/x.json" are the working directory's, not none.
  auto dir = std::filesystem::absolute(target, ec).parent_path();
  while (!std::filesystem::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path())
    dir = dir.parent_path();
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(
        fmt::format("{} {}: {} is a file, not a folder", flag, file->string(), dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{} {}: the folder {} is not writable", flag, file->string(), dir.string()));
  if (std::filesystem::is_directory(*file, ec))
    throw UsageError(fmt::format("{} {}: is a folder, not a file", flag, file->string()));
  // A file made read-only is not replaced (renaming over it would): whoever made it so, root
  // included, meant it to stay.
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      ((st.st_mode & S_IWUSR) == 0 || ::access(target.c_str(), W_OK) != 0))
    throw UsageError(fmt::format("{} {}: is read-only; nothing was written", flag, file->string()));
}

void make_folder_for(const std::filesystem::path& file) {
  if (util::is_standard_output(file) || util::is_special_file(file)) return;
  const auto dir = util::resolve_links(file).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
}

namespace {

// Where annotations' paths are relative to: the CI's checkout ($GITHUB_WORKSPACE,
// $CI_PROJECT_DIR), else here.
std::filesystem::path workspace_root(const char* variable) {
  if (const char* ws = std::getenv(variable); ws && *ws) return ws;
  std::error_code ec;
  return std::filesystem::current_path(ec);
}

std::string json_report(const Report& report) { return report_to_json_text(report); }
std::string sarif_report(const Report& report) { return render_sarif(report).dump(2) + "\n"; }
std::string gitlab_report(const Report& report) {
  return render_gitlab_codequality(report, workspace_root("CI_PROJECT_DIR"));
}

}  // namespace

const std::vector<ReportFile>& report_files() {
  static const std::vector<ReportFile> files = {
      {"--json", "Write the JSON report (docs/report-schema.md) to FILE", &ReportOutputs::json,
       json_report, util::no_workflow_commands_in_json},
      {"--junit", "Write JUnit XML (one testcase per cell) to FILE", &ReportOutputs::junit,
       render_junit, util::no_workflow_commands},
      {"--sarif", "Write SARIF 2.1.0 (one result per failing cell) to FILE", &ReportOutputs::sarif,
       sarif_report, util::no_workflow_commands_in_json},
      {"--html", "Write a self-contained HTML report to FILE", &ReportOutputs::html, render_html,
       util::no_workflow_commands_in_json},  // the fixed template has no "##[", its blob is JSON
      {"--markdown", "Write the matrix as Markdown to FILE", &ReportOutputs::markdown,
       render_markdown, util::no_workflow_commands},
      {"--gitlab", "Write a GitLab Code Quality report (one issue per failing cell) to FILE",
       &ReportOutputs::gitlab, gitlab_report, util::no_workflow_commands_in_json},
      {"--write-baseline", "Record today's failures in FILE", &ReportOutputs::write_baseline,
       baseline_to_json, util::no_workflow_commands_in_json},
  };
  return files;
}

bool writes_to_stdout(const ReportOutputs& outputs) {
  for (const auto& format : report_files())
    if (const auto& file = outputs.*format.path; file && util::is_standard_output(*file))
      return true;
  return false;
}

namespace {

// The file a path names, however it is spelt ("X", "./X", "dir/../X", a link to X, a dangling
// link to the X still to be written, a hard link to X): two report flags naming one file would
// leave only the last format written, with nothing said. An existing file is its device and
// inode; a file still to be made, the path its links lead to.
std::string identity_of(const std::filesystem::path& file) {
  if (const auto inode = util::inode_of(file)) return *inode;
  std::error_code ec;
  std::filesystem::path target = file;
  try {
    target = util::resolve_links(file);
  } catch (const std::runtime_error&) {  // a loop: check_output_path has refused it already
  }
  auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(target, ec), ec);
  return (ec ? std::filesystem::absolute(target).lexically_normal() : canonical).string();
}

// Writing a report to /dev/null twice, or beside standard output going there, is harmless.
bool discarded(const std::optional<std::filesystem::path>& file) {
  return file && *file != "-" && util::is_null_device(*file);
}

void refuse_one_file_for_two_formats(const ReportOutputs& outputs) {
  std::map<std::string, std::string_view> flag_of;
  for (const auto& format : report_files()) {
    const auto& file = outputs.*format.path;
    if (!file || util::is_standard_output(*file) || discarded(file)) continue;
    const auto [it, fresh] = flag_of.emplace(identity_of(*file), format.flag);
    if (!fresh)
      throw UsageError(fmt::format("{} and {} name the same file ({}): give each report its own",
                                   it->second, format.flag, file->string()));
  }
}

}  // namespace

void check_destinations(const ReportOutputs& outputs) {
  int on_stdout = 0;
  for (const auto& format : report_files())
    if (const auto& file = outputs.*format.path;
        file && util::is_standard_output(*file) && !discarded(file))
      ++on_stdout;
  if (on_stdout > 1) throw UsageError("only one report can be written to standard output ('-')");
  if (on_stdout > 0 && outputs.github)
    throw UsageError("--github writes annotations on standard output: no report can go there too");
  for (const auto& format : report_files()) check_output_path(outputs.*format.path, format.flag);
  refuse_one_file_for_two_formats(outputs);
}

std::vector<std::string> write_reports(const Report& report, const ReportOutputs& outputs) {
  std::vector<std::string> errors;
  for (const auto& format : report_files()) {
    const auto& file = outputs.*format.path;
    if (!file) continue;
    try {
      make_folder_for(*file);
      // On standard output the report is read in a CI log too: no line of compiler text in it
      // (JUnit and Markdown keep their newlines) may run as a workflow command ("::warning::").
      const auto text = format.render(report);
      util::write_output_file(*file,
                              util::is_standard_output(*file) ? format.for_a_log(text) : text);
    } catch (const util::WriteError& e) {
      const auto fix = e.disk_fix();
      errors.push_back(fix.empty() ? e.what() : fmt::format("{}: {}", e.what(), fix));
    } catch (const std::exception& e) {
      errors.emplace_back(e.what());
    }
  }
  if (outputs.github) {
    std::fputs(github_annotations(report, workspace_root("GITHUB_WORKSPACE")).c_str(), stdout);
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
