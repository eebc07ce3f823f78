#include "src/report/baseline.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/report/json.hpp"
#include "util/json_reader.hpp"

namespace portcheck {
namespace {

constexpr int kBaselineVersion = 1;

using CellKey = std::tuple<std::string, std::string, std::string>;  // row, target, triton

}  // namespace

std::vector<BaselineEntry> load_baseline(const std::filesystem::path& file) {
  const auto json = read_json_input(file, "--baseline");
  std::vector<BaselineEntry> out;
  if (json.is_object() && json.contains("schema_version")) {  // an earlier JSON report
    for (const auto& cell : report_from_json(json, file.string()).cells)
      if (cell.failed_outcome())
        out.push_back({cell.kernel, cell.target, cell.triton, cell.fingerprint,
                       to_string(cell.kind), cell.message});
    return out;
  }
  if (!json.is_object() || json.value("baseline_version", nlohmann::json()) != kBaselineVersion ||
      !json.contains("failures"))
    throw UsageError(fmt::format(
        "--baseline {}: neither a baseline written by --write-baseline nor a JSON report",
        file.string()));
  try {
    std::map<CellKey, std::string> path_of;  // one entry per cell: which of two would match?
    for (const auto& f : util::JsonAt(json)["failures"].items()) {
      BaselineEntry e{
          f["row"].string(),          f["target"].string(), f.string_or("triton", "current"),
          f.string_or("fingerprint"), f.string_or("kind"),  f.string_or("message")};
      if (e.row.empty() || e.target.empty()) f.fail("an entry with a row and a target");
      const auto [first, fresh] = path_of.emplace(CellKey{e.row, e.target, e.triton}, f.path());
      if (!fresh)
        throw util::JsonShapeError(
            f.path(),
            fmt::format("{} on {} (triton {}) is also {}: a baseline lists each cell once", e.row,
                        e.target, e.triton, first->second));
      out.push_back(std::move(e));
    }
  } catch (const util::JsonShapeError& e) {
    throw UsageError(fmt::format("--baseline {}: {}", file.string(), e.what()));
  }
  return out;
}

std::string baseline_to_json(const Report& report) {
  std::vector<const CellResult*> failures;
  for (const auto& cell : report.cells)
    if (cell.failed_outcome()) failures.push_back(&cell);
  std::sort(failures.begin(), failures.end(), [](const CellResult* a, const CellResult* b) {
    return std::tie(a->kernel, a->target, a->triton) < std::tie(b->kernel, b->target, b->triton);
  });
  // One entry per line: small diffs when a failure comes or goes.
  std::string out =
      fmt::format("{{\n  \"baseline_version\": {},\n  \"tool\": {},\n  \"failures\": [",
                  kBaselineVersion, nlohmann::json(report.tool_version).dump());
  for (std::size_t i = 0; i < failures.size(); ++i) {
    const auto& c = *failures[i];
    // ordered_json keeps the fields in reading order: which cell first, then how it failed.
    const nlohmann::ordered_json entry = {
        {"row", c.kernel},           {"target", c.target},
        {"triton", c.triton},        {"fingerprint", c.fingerprint},
        {"kind", to_string(c.kind)}, {"message", c.message.substr(0, 200)}};
    out += (i ? ",\n    " : "\n    ") + entry.dump();
  }
  out += failures.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void apply_baseline(Report& report, const std::vector<BaselineEntry>& baseline,
                    const std::string& origin) {
  std::map<CellKey, const BaselineEntry*> known;
  for (const auto& e : baseline) known[{e.row, e.target, e.triton}] = &e;
  report.baseline.applied = true;
  report.baseline.origin = origin;
  report.baseline.fixed.clear();
  for (auto& cell : report.cells) {
    const auto it = known.find({cell.kernel, cell.target, cell.triton});
    if (it == known.end()) continue;
    // Every failing verdict a baseline records is matched the same way: a launch-limit cell
    // (status launch) as much as a compile failure (status failed).
    if (is_unexpected_failure(cell.status) && it->second->fingerprint == cell.fingerprint) {
      cell.is_new = false;
      cell.in_baseline = true;
    } else if (cell.status == Status::ok || cell.status == Status::xpass ||
               cell.status == Status::skipped) {  // a config the autotuner skips is no failure
      report.baseline.fixed.push_back({cell.kernel, cell.target, cell.triton,
                                       it->second->fingerprint, it->second->kind,
                                       it->second->message});
    }
  }
}

nlohmann::json baseline_summary_json(const BaselineSummary& baseline,
                                     std::string (*text)(std::string_view)) {
  const auto clean = [&](const std::string& s) { return text ? text(s) : s; };
  nlohmann::json fixed = nlohmann::json::array();
  for (const auto& f : baseline.fixed)
    fixed.push_back({{"row", f.row},
                     {"target", f.target},
                     {"triton", f.triton},
                     {"fingerprint", f.fingerprint},
                     {"kind", f.kind},
                     {"message", clean(f.message)}});
  return {{"origin", clean(baseline.origin)}, {"fixed", fixed}};
}

}  // namespace portcheck
