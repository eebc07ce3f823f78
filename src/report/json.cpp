#include "src/report/json.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "src/report/baseline.hpp"
#include "src/report/grouping.hpp"

namespace portcheck {
namespace {

nlohmann::json location_json(const std::optional<SourceLocation>& loc) {
  if (!loc) return nullptr;
  return {{"file", loc->file}, {"line", loc->line}};
}

nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json baseline_json(const BaselineSummary& baseline) {
  if (!baseline.applied) return nullptr;
  return baseline_summary_json(baseline);
}

// The autotuned launch a config belongs to, as its target's autotuner runs it; null for a row
// launched as it is.
nlohmann::json autotuned_json(const CellResult& c) {
  if (!c.autotuned) return nullptr;
  return {{"launch", c.autotuned->name},
          {"configs", c.autotuned->configs},
          {"remaining", c.autotuned->remaining},
          {"note", or_null(autotuner_note(c))}};
}

// A cell; `letters` are the failure groups' letters by fingerprint.
nlohmann::json cell_json(const CellResult& c, const std::map<std::string, std::string>& letters) {
  const bool failed = c.kind != FailureKind::none;
  const auto letter = letters.find(c.fingerprint);
  return {
      {"kernel", c.base_kernel},
      {"variant", or_null(c.variant)},
      {"row", c.kernel},
      {"target", c.target},
      {"triton", c.triton},
      {"triton_version", c.triton_version},
      {"status", to_string(c.status)},
      {"kind", failed ? nlohmann::json(to_string(c.kind)) : nlohmann::json(nullptr)},
      {"stage", failed ? nlohmann::json(c.stage) : nlohmann::json(nullptr)},
      {"pass", or_null(c.pass)},
      {"message", failed ? nlohmann::json(c.message) : nlohmann::json(nullptr)},
      {"fingerprint", failed ? nlohmann::json(c.fingerprint) : nlohmann::json(nullptr)},
      {"group", !failed                   ? nlohmann::json(nullptr)
                : letter == letters.end() ? nlohmann::json("")
                                          : nlohmann::json(letter->second)},
      {"new", c.is_new},
      {"in_baseline", c.in_baseline},
      {"host_choices_of", c.host_choices_of},
      {"autotuner", c.autotuner_raises.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json{{"skips", c.autotuner_skips},
                                                                {"raises", c.autotuner_raises}}},
      {"autotuned", autotuned_json(c)},
      {"cached", c.cached},
      {"represented_by", or_null(c.represented_by)},
      {"shared_with", or_null(c.shared_with)},
      {"ttir_key", or_null(c.ttir_key)},
      {"predicted", c.predicted},
      {"launch", c.launch},
      {"why", or_null(c.why)},
      {"link", or_null(c.link)},
      {"compile_s", c.compile_s},
      {"wall_s", c.wall_s},
      {"waited_s", c.waited_s},
      {"started_s", c.started_s},
      {"rerun_fresh", c.rerun_fresh},
      {"first_attempt_s", c.first_attempt_s},
      {"stages", c.stages},
      {"metadata", to_json(c.metadata)},
      {"sizes", c.sizes},
      {"resources", c.resources},
      {"source", location_json(c.kernel_source)},
      {"error_source", location_json(c.error_source)},
      {"log", failed ? nlohmann::json(c.log) : nlohmann::json(nullptr)},
  };
}

std::map<std::string, std::string> failure_letters(const Report& report) {
  std::map<std::string, std::string> letters;
  for (const auto& g : group_failures(report)) letters[g.fingerprint] = g.letter;
  return letters;
}

// Everything of the report but its cells, whose member is an empty array.
nlohmann::json report_without_cells(const Report& report) {
  nlohmann::json summary = {{"cells", report.cells.size()}};
  std::map<std::string, int> counts{
      {"ok", 0}, {"failed", 0}, {"xfail", 0}, {"xpass", 0}, {"skipped", 0}};
  int fresh = 0;
  int cached = 0;
  for (const auto& c : report.cells) {
    ++counts[to_string(c.status)];
    fresh += c.is_new ? 1 : 0;
    cached += c.cached ? 1 : 0;
  }
  for (const auto& [k, v] : counts) summary[k] = v;
  summary["new"] = fresh;
  summary["from_cache"] = cached;
  return {
      {"schema_version", kReportSchemaVersion},
      {"tool", {{"name", "triton-portcheck"}, {"version", report.tool_version}}},
      {"disclaimer", kCompileOnlyDisclaimer},
      {"environment", report.environment},
      {"targets", report.targets},
      {"rows", report.rows},
      {"interrupted", report.interrupted},
      {"manifest_digest", report.manifest_digest},
      {"shard", report.shard.count
                    ? nlohmann::json{{"index", report.shard.index}, {"count", report.shard.count}}
                    : nlohmann::json(nullptr)},
      {"merged_from", report.merged_from},
      {"missing_shards", report.missing_shards},
      {"baseline", baseline_json(report.baseline)},
      {"wall_s", report.wall_s},
      {"summary", summary},
      {"cells", nlohmann::json::array()},
  };
}

}  // namespace

nlohmann::json report_to_json(const Report& report) {
  const auto letters = failure_letters(report);
  auto json = report_without_cells(report);
  auto& cells = json["cells"];
  for (const auto& c : report.cells) cells.push_back(cell_json(c, letters));
  return json;
}

std::string report_to_json_text(const Report& report) {
  const auto head = report_without_cells(report).dump(2);
  // The top level's members are indented by two spaces, one per line: this line is the cells'
  // member itself (a user's text in a string holds no raw newline).
  constexpr std::string_view kNoCells = "\n  \"cells\": []";
  const auto at = head.find(kNoCells);
  const auto letters = failure_letters(report);
  const auto cell_text = [&](const CellResult& c) { return cell_json(c, letters).dump(2); };
  constexpr std::string_view kIndent = "\n    ";  // a cell's lines, at the report's third level
  // Twice through the cells, the first to measure: the text is allocated once. A report of
  // 10,125 cells is 30 MB, and grown by doubling, then spliced, it peaked at three times that.
  std::size_t size = head.size() + kIndent.size() + 1;
  for (const auto& c : report.cells) {
    const auto text = cell_text(c);
    size +=
        text.size() + kIndent.size() + 1 +
        (kIndent.size() - 1) * static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  std::string out;
  out.reserve(size);
  out.append(head, 0, at);
  out += "\n  \"cells\": [";
  for (std::size_t i = 0; i < report.cells.size(); ++i) {
    if (i > 0) out += ',';
    out += kIndent;
    for (const char ch : cell_text(report.cells[i])) {
      if (ch == '\n')
        out += kIndent;
      else
        out += ch;
    }
  }
  out += report.cells.empty() ? "]" : "\n  ]";
  out.append(head, at + kNoCells.size());
  out += '\n';
  return out;
}

}  // namespace portcheck
