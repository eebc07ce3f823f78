#include "src/report_json.hpp"

#include <map>

namespace portcheck {
namespace {

nlohmann::json location_json(const std::optional<SourceLocation>& loc) {
  if (!loc) return nullptr;
  return {{"file", loc->file}, {"line", loc->line}};
}

nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

nlohmann::json report_to_json(const Report& report) {
  std::map<std::string, std::string> letters;
  for (const auto& g : group_failures(report)) letters[g.fingerprint] = g.letter;
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : report.cells) {
    const bool failed = c.kind != FailureKind::none;
    cells.push_back({
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
        {"group", failed ? nlohmann::json(letters[c.fingerprint]) : nlohmann::json(nullptr)},
        {"new", c.is_new},
        {"cached", c.cached},
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
    });
  }
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
      {"environment", report.environment},
      {"targets", report.targets},
      {"rows", report.rows},
      {"interrupted", report.interrupted},
      {"wall_s", report.wall_s},
      {"summary", summary},
      {"cells", cells},
  };
}

}  // namespace portcheck
