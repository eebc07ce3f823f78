// Reports read back (report, merge, diff, --baseline): every value checked against what the
// renderers assume, so that a damaged or hostile report is one exit-2 line naming the file and
// the key path, never an internal error or a stack overflow (issue 14).
#include <climits>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/report/json.hpp"
#include "util/bounded_json.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"

namespace portcheck {
namespace {

using util::JsonAt;

UsageError not_a_report(const std::string& origin, const std::string& what) {
  return UsageError(fmt::format("{}: not a triton-portcheck report: {}", origin, what));
}

// A member that, when present, must be an object: nullopt when absent.
std::optional<JsonAt> object_member(const JsonAt& parent, const char* key) {
  auto member = parent.find(key);
  if (member) (void)member->object();
  return member;
}

std::optional<SourceLocation> location_from(const JsonAt& cell, const char* key) {
  const auto j = object_member(cell, key);
  if (!j) return std::nullopt;
  const auto line = j->find("line");
  return SourceLocation{j->string_or("file"),
                        line ? static_cast<int>(line->integer(0, INT_MAX)) : 0};
}

// A report's metadata: the members the worker's kernel_metadata defines, each of its type
// (another triton-portcheck's report may hold more: those are not read).
KernelMetadata metadata_from(const JsonAt& m) {
  KernelMetadata out;
  const auto text = [&](const char* key) -> std::optional<std::string> {
    const auto v = m.find(key);
    return v ? std::optional(v->string()) : std::nullopt;
  };
  const auto count = [&](const char* key) -> std::optional<std::int64_t> {
    const auto v = m.find(key);
    return v ? std::optional(v->integer(INT64_MIN, INT64_MAX)) : std::nullopt;
  };
  out.name = text("name");
  out.hash = text("hash");
  for (const auto& [key, member] : kMetadataCounts) out.*member = count(key);
  if (const auto dims = m.find("cluster_dims")) {
    out.cluster_dims.emplace();
    for (const auto& d : dims->items()) out.cluster_dims->push_back(d.integer(0, INT64_MAX));
  }
  if (const auto t = object_member(m, "target")) {
    const auto arch = (*t)["arch"];
    out.target = KernelMetadata::Target{
        (*t)["backend"].string(),
        arch.json().is_string() ? KernelMetadata::Target::Arch(arch.string())
                                : KernelMetadata::Target::Arch(arch.integer(INT64_MIN, INT64_MAX)),
        (*t)["warp_size"].integer(INT64_MIN, INT64_MAX)};
  }
  out.triton_version = text("triton_version");
  return out;
}

// Removes `key` from `object` when it is null: the reader takes null for absent, and so must
// the renderers, which read the environment as the JSON it is.
void drop_null(nlohmann::json& object, const char* key) {
  if (object.is_object() && object.contains(key) && object[key].is_null()) object.erase(key);
}

// What the renderers read of `environment`: versions as strings, options as an object; null
// where one is expected is taken as absent ("python": null is a report without it).
nlohmann::json environment_from(const JsonAt& report) {
  const auto env = object_member(report, "environment");
  if (!env) return nlohmann::json::object();
  for (const char* key : {"triton", "python"})
    if (const auto part = object_member(*env, key)) (void)part->string_or("version");
  if (const auto tritons = env->find("tritons"))
    for (const auto& t : tritons->items()) (void)t.string_or("version");
  if (const auto options = object_member(*env, "options")) {
    (void)options->string_or("manifest");
    (void)options->string_or("save_ir");
  }
  (void)env->string_or("started");
  (void)env->string_or("host");
  auto out = env->json();
  for (const char* key : {"triton", "python", "tritons", "options", "started", "host"})
    drop_null(out, key);
  for (const char* key : {"triton", "python"})
    if (out.contains(key)) drop_null(out[key], "version");
  if (out.contains("tritons"))
    for (auto& t : out["tritons"]) drop_null(t, "version");
  return out;
}

// `launch`: null, or {needs, limits, problems: [text]}.
nlohmann::json launch_from(const JsonAt& cell) {
  const auto launch = object_member(cell, "launch");
  if (!launch) return nullptr;
  if (const auto problems = launch->find("problems")) (void)problems->strings();
  (void)object_member(*launch, "needs");
  (void)object_member(*launch, "limits");
  return launch->json();
}

BaselineSummary baseline_from(const JsonAt& j) {
  BaselineSummary baseline;
  baseline.applied = true;
  baseline.origin = j.string_or("origin");
  if (const auto fixed = j.find("fixed"))
    for (const auto& f : fixed->items())
      baseline.fixed.push_back({f.string_or("row"), f.string_or("target"), f.string_or("triton"),
                                f.string_or("fingerprint"), f.string_or("kind"),
                                f.string_or("message")});
  return baseline;
}

// What the autotuner does with the cell's failure, and the autotuned launch it is a config of.
void autotune_from(const JsonAt& c, CellResult& cell) {
  if (const auto tuner = object_member(c, "autotuner")) {
    cell.autotuner_skips = tuner->boolean_or("skips", false);
    cell.autotuner_raises = tuner->string_or("raises");
  }
  if (const auto launch = object_member(c, "autotuned")) {
    constexpr std::int64_t kMost = std::numeric_limits<int>::max();
    cell.autotuned = AutotunedLaunch{(*launch)["launch"].string(),
                                     static_cast<int>((*launch)["configs"].integer(0, kMost)),
                                     static_cast<int>((*launch)["remaining"].integer(0, kMost))};
  }
}

// The outcome of a cell: status, kind and where and how it failed.
void outcome_from(const JsonAt& c, CellResult& cell) {
  const auto status_at = c["status"];
  const auto status = status_from_string(status_at.string());
  if (!status) status_at.fail("one of ok, failed, xfail, xpass, launch, unchecked, skipped");
  cell.status = *status;
  const auto kind = kind_from_string(c.string_or("kind"));
  if (!kind) c["kind"].fail("a failure kind such as \"mlir-error\"");
  cell.kind = *kind;
  cell.stage = c.string_or("stage");
  cell.pass = c.string_or("pass");
  cell.message = c.string_or("message");
  cell.fingerprint = c.string_or("fingerprint");
  cell.expected_failure = cell.status == Status::xfail || cell.status == Status::xpass;
  cell.log = c.string_or("log");
  cell.why = c.string_or("why");
  cell.represented_by = c.string_or("represented_by");
  cell.shared_with = c.string_or("shared_with");
  cell.ttir_key = c.string_or("ttir_key");
  cell.link = c.string_or("link");
  cell.error_source = location_from(c, "error_source");
}

CellResult cell_from(const JsonAt& c) {
  CellResult cell;
  cell.base_kernel = c["kernel"].string();
  cell.variant = c.string_or("variant");
  cell.kernel = c.string_or(
      "row", cell.variant.empty() ? cell.base_kernel : cell.base_kernel + "[" + cell.variant + "]");
  cell.target = c["target"].string();
  cell.triton = c.string_or("triton", "current");
  cell.triton_version = c.string_or("triton_version");
  outcome_from(c, cell);
  cell.is_new = c.boolean_or("new", false);
  cell.in_baseline = c.boolean_or("in_baseline", false);
  if (const auto personas = c.find("host_choices_of")) cell.host_choices_of = personas->strings();
  cell.cached = c.boolean_or("cached", false);
  if (const auto predicted = object_member(c, "predicted")) cell.predicted = predicted->json();
  cell.launch = launch_from(c);
  autotune_from(c, cell);
  cell.compile_s = c.number_or("compile_s", 0.0);
  cell.wall_s = c.number_or("wall_s", 0.0);
  cell.waited_s = c.number_or("waited_s", 0.0);
  cell.started_s = c.number_or("started_s", 0.0);
  cell.rerun_fresh = c.boolean_or("rerun_fresh", false);
  cell.first_attempt_s = c.number_or("first_attempt_s", 0.0);
  if (const auto metadata = object_member(c, "metadata")) cell.metadata = metadata_from(*metadata);
  const std::pair<const char*, nlohmann::json CellResult::*> objects[] = {
      {"stages", &CellResult::stages},
      {"sizes", &CellResult::sizes},
      {"resources", &CellResult::resources}};
  for (const auto& [key, member] : objects)
    if (const auto j = object_member(c, key)) cell.*member = j->json();
  cell.kernel_source = location_from(c, "source");
  return cell;
}

Report report_from(const JsonAt& j) {
  Report report;
  report.tool_version = j["tool"]["version"].string();
  report.environment = environment_from(j);
  if (const auto options = object_member(JsonAt(report.environment, "environment"), "options"))
    report.manifest = options->string_or("manifest");
  report.targets = j["targets"].strings();
  report.rows = j["rows"].strings();
  report.interrupted = j.boolean_or("interrupted", false);
  report.manifest_digest = j.string_or("manifest_digest");
  if (const auto shard = object_member(j, "shard")) {
    const auto number = [&](const char* key) {
      const auto v = shard->find(key);
      return v ? static_cast<int>(v->integer(0, INT_MAX)) : 0;
    };
    report.shard = ShardInfo{number("index"), number("count")};
  }
  if (const auto merged = j.find("merged_from")) report.merged_from = merged->strings();
  if (const auto missing = j.find("missing_shards")) report.missing_shards = missing->strings();
  if (const auto baseline = object_member(j, "baseline"))
    report.baseline = baseline_from(*baseline);
  report.wall_s = j.number_or("wall_s", 0.0);
  // One verdict per cell: a second one would be matched, diffed or merged in place of the first
  // with nothing said.
  std::map<std::tuple<std::string, std::string, std::string>, std::string> path_of;
  for (const auto& c : j["cells"].items()) {
    auto cell = cell_from(c);
    const auto [first, fresh] =
        path_of.emplace(std::tie(cell.kernel, cell.target, cell.triton), c.path());
    if (!fresh)
      throw util::JsonShapeError(
          c.path(), fmt::format("{} on {} (triton {}) is also {}: a report holds each cell once",
                                cell.kernel, cell.target, cell.triton, first->second));
    report.cells.push_back(std::move(cell));
  }
  return report;
}

}  // namespace

Report report_from_json(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object() || !json.contains("schema_version"))
    throw not_a_report(origin, "no schema_version");
  if (json["schema_version"] != kReportSchemaVersion)
    throw not_a_report(origin, fmt::format("schema_version {} (this version reads {})",
                                           json["schema_version"].dump(), kReportSchemaVersion));
  if (!json.contains("cells") || !json["cells"].is_array()) throw not_a_report(origin, "no cells");
  try {
    return report_from(JsonAt(json));
  } catch (const util::JsonShapeError& e) {
    throw UsageError(fmt::format("{}: {}", origin, e.what()));
  }
}

nlohmann::json read_json_input(const std::filesystem::path& file, const std::string& label) {
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const std::exception& e) {
    throw UsageError(label.empty() ? e.what() : fmt::format("{}: {}", label, e.what()));
  }
  try {
    return util::parse_json_bounded(text);
  } catch (const util::JsonInputError& e) {
    const auto name = label.empty() ? file.string() : fmt::format("{} {}", label, file.string());
    throw UsageError(fmt::format("{}: {}", name, e.what()));
  }
}

Report load_report(const std::filesystem::path& file) {
  return report_from_json(read_json_input(file, ""), file.string());
}

}  // namespace portcheck
