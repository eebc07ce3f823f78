#include "src/report/json.hpp"

#include <map>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/report/baseline.hpp"
#include "src/report/grouping.hpp"
#include "util/fs.hpp"

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
      {"cached", c.cached},
      {"predicted", c.predicted},
      {"launch", c.launch},
      {"why", or_null(c.why)},
      {"link", or_null(c.link)},
      {"compile_s", c.compile_s},
      {"wall_s", c.wall_s},
      {"stages", c.stages},
      {"metadata", c.metadata},
      {"sizes", c.sizes},
      {"resources", c.resources},
      {"source", location_json(c.kernel_source)},
      {"error_source", location_json(c.error_source)},
      {"log", failed ? nlohmann::json(c.log) : nlohmann::json(nullptr)},
  };
}

}  // namespace

nlohmann::json report_to_json(const Report& report) {
  std::map<std::string, std::string> letters;
  for (const auto& g : group_failures(report)) letters[g.fingerprint] = g.letter;
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : report.cells) cells.push_back(cell_json(c, letters));
  nlohmann::json summary = {{"cells", report.cells.size()}};
  std::map<std::string, int> counts{{"ok", 0}, {"failed", 0}, {"xfail", 0}, {"xpass", 0}};
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
      {"baseline", baseline_json(report.baseline)},
      {"wall_s", report.wall_s},
      {"summary", summary},
      {"cells", cells},
  };
}

namespace {

std::optional<SourceLocation> location_from(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  return SourceLocation{j.value("file", ""), j.value("line", 0)};
}

std::string string_or_empty(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

UsageError not_a_report(const std::string& origin, const std::string& what) {
  return UsageError(fmt::format("{}: not a triton-portcheck report: {}", origin, what));
}

BaselineSummary baseline_from_json(const nlohmann::json& j) {
  BaselineSummary baseline;
  baseline.applied = true;
  baseline.origin = j.value("origin", "");
  for (const auto& f : j.value("fixed", nlohmann::json::array()))
    baseline.fixed.push_back({f.value("row", ""), f.value("target", ""), f.value("triton", ""),
                              f.value("fingerprint", ""), f.value("kind", ""),
                              f.value("message", "")});
  return baseline;
}

// The JSON objects a cell carries as they are (absent or not an object: left empty).
void copy_objects(const nlohmann::json& c, CellResult& cell) {
  const std::pair<const char*, nlohmann::json CellResult::*> objects[] = {
      {"stages", &CellResult::stages},
      {"metadata", &CellResult::metadata},
      {"sizes", &CellResult::sizes},
      {"resources", &CellResult::resources}};
  for (const auto& [key, member] : objects)
    if (c.contains(key) && c[key].is_object()) cell.*member = c[key];
}

// cells[i] of a report; `where` names it in the error.
CellResult cell_from_json(const nlohmann::json& c, const std::string& where,
                          const std::string& origin) {
  CellResult cell;
  cell.base_kernel = c.at("kernel").get<std::string>();
  cell.variant = string_or_empty(c, "variant");
  cell.kernel = c.value(
      "row", cell.variant.empty() ? cell.base_kernel : cell.base_kernel + "[" + cell.variant + "]");
  cell.target = c.at("target").get<std::string>();
  cell.triton = c.value("triton", "current");
  cell.triton_version = string_or_empty(c, "triton_version");
  const auto status = status_from_string(c.at("status").get<std::string>());
  if (!status) throw not_a_report(origin, where + ".status: unknown status");
  cell.status = *status;
  const auto kind = kind_from_string(string_or_empty(c, "kind"));
  if (!kind) throw not_a_report(origin, where + ".kind: unknown kind");
  cell.kind = *kind;
  cell.stage = string_or_empty(c, "stage");
  cell.pass = string_or_empty(c, "pass");
  cell.message = string_or_empty(c, "message");
  cell.fingerprint = string_or_empty(c, "fingerprint");
  cell.is_new = c.value("new", false);
  cell.in_baseline = c.value("in_baseline", false);
  cell.expected_failure = cell.status == Status::xfail || cell.status == Status::xpass;
  cell.cached = c.value("cached", false);
  if (c.contains("predicted") && c["predicted"].is_object()) cell.predicted = c["predicted"];
  if (c.contains("launch") && c["launch"].is_object()) cell.launch = c["launch"];
  cell.compile_s = c.value("compile_s", 0.0);
  cell.wall_s = c.value("wall_s", 0.0);
  copy_objects(c, cell);
  cell.log = string_or_empty(c, "log");
  cell.kernel_source = location_from(c.value("source", nlohmann::json()));
  cell.error_source = location_from(c.value("error_source", nlohmann::json()));
  cell.why = string_or_empty(c, "why");
  cell.link = string_or_empty(c, "link");
  return cell;
}

}  // namespace

Report report_from_json(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object() || !json.contains("schema_version"))
    throw not_a_report(origin, "no schema_version");
  if (json["schema_version"] != kReportSchemaVersion)
    throw not_a_report(origin, fmt::format("schema_version {} (this version reads {})",
                                           json["schema_version"].dump(), kReportSchemaVersion));
  if (!json.contains("cells") || !json["cells"].is_array()) throw not_a_report(origin, "no cells");
  Report report;
  try {
    report.tool_version = json.at("tool").at("version").get<std::string>();
    report.environment = json.value("environment", nlohmann::json::object());
    report.manifest = report.environment.contains("options")
                          ? report.environment["options"].value("manifest", "")
                          : std::string();
    report.targets = json.at("targets").get<std::vector<std::string>>();
    report.rows = json.at("rows").get<std::vector<std::string>>();
    report.interrupted = json.value("interrupted", false);
    report.manifest_digest = json.value("manifest_digest", "");
    if (json.contains("shard") && json["shard"].is_object())
      report.shard = ShardInfo{json["shard"].value("index", 0), json["shard"].value("count", 0)};
    if (json.contains("merged_from") && json["merged_from"].is_array())
      report.merged_from = json["merged_from"].get<std::vector<std::string>>();
    if (json.contains("baseline") && json["baseline"].is_object())
      report.baseline = baseline_from_json(json["baseline"]);
    report.wall_s = json.value("wall_s", 0.0);
    std::size_t index = 0;
    for (const auto& c : json["cells"])
      report.cells.push_back(cell_from_json(c, fmt::format("cells[{}]", index++), origin));
  } catch (const nlohmann::json::exception& e) {
    throw not_a_report(origin, e.what());
  }
  return report;
}

Report load_report(const std::filesystem::path& file) {
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not JSON: {}", file.string(), e.what()));
  }
  return report_from_json(json, file.string());
}

}  // namespace portcheck
