#include "src/report/gitlab.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/report/terminal.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

nlohmann::json location_of(const Report& report, const CellResult& cell,
                           const std::filesystem::path& root) {
  const auto& where = cell.error_source ? cell.error_source : cell.kernel_source;
  // A cell that never reached the compiler (an import error) has no source: the manifest that
  // named it is where the user looks.
  const std::string file = where && !where->file.empty() ? where->file : report.manifest;
  const int line = where && where->line > 0 ? where->line : 1;
  return {{"path", util::relative_if_inside(file, root).string()}, {"lines", {{"begin", line}}}};
}

nlohmann::json issue_of(const Report& report, const CellResult& cell,
                        const std::filesystem::path& root) {
  const auto description = fmt::format("{} on {} (Triton {}): {}", cell.kernel, cell.target,
                                       cell.triton_version, describe_failure(cell));
  // The failure's own fingerprint is shared by every cell that fails the same way; GitLab needs
  // one per issue, so the cell's identity joins it.
  const auto identity =
      fmt::format("{}|{}|{}|{}", cell.fingerprint, cell.kernel, cell.target, cell.triton);
  return {{"description", description},
          {"check_name", "triton-portcheck/" + to_string(cell.kind)},
          {"fingerprint", util::sha1_hex(identity)},
          // A config the autotuner skips is information (GitLab's lowest severity).
          {"severity", cell.status == Status::skipped ? "info"
                       : cell.is_new                  ? "major"
                                                      : "minor"},
          {"location", location_of(report, cell, root)}};
}

}  // namespace

std::string render_gitlab_codequality(const Report& report, const std::filesystem::path& root) {
  auto issues = nlohmann::json::array();
  for (const auto& cell : report.cells)
    if ((cell.failed_outcome() && cell.status != Status::xfail) || cell.status == Status::skipped)
      issues.push_back(issue_of(report, cell, root));
  // Compiler text may hold bytes that are not UTF-8; they are replaced rather than refused.
  return issues.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace portcheck
