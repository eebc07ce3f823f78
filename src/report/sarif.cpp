#include "src/report/sarif.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "src/report/baseline.hpp"
#include "src/report/grouping.hpp"
#include "src/report/markdown.hpp"
#include "src/report/terminal.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

// How the SARIF view maps our outcomes (one result per cell whose compile failed):
//  - `failed` (a new failure): level "error". These are what a CI gate and GitHub code scanning
//    should flag.
//  - `xfail` (failed where the manifest expects it): level "note" with an external suppression
//    ("accepted", justified by the manifest). SARIF consumers treat suppressed results as known
//    and dismissed (GitHub code scanning closes them) while they stay visible in the log, and the
//    partial fingerprint is the same as when the cell was a new failure, so accepting a failure
//    in the manifest dismisses the existing alert instead of opening a different one.
//  - `failed` but already in the --baseline (not new): level "warning", baselineState
//    "unchanged"; with a baseline applied, new failures get baselineState "new". Without one no
//    result has a baselineState (SARIF: absent means not compared with a baseline).
//  - `skipped` (a config of an autotuned launch that its autotuner skips on the target while the
//    launch keeps others): level "note", under one rule of its own (kSkippedConfigId), so that it
//    is visible as information and never opens an alert.
//  - `xpass` and `ok` cells are not problems and produce no result (the counts are in
//    run.properties).
//  - `internal-error` is a bug of triton-portcheck, never the kernel's: blaming a line of the
//    user's code for it would be wrong, so it is a tool execution notification of the invocation
//    (which then reports executionSuccessful = false), not a result.
constexpr const char* kSchema = "https://json.schemastore.org/sarif-2.1.0.json";
constexpr const char* kSrcRoot = "%SRCROOT%";
constexpr const char* kInternalErrorId = "portcheck/internal-error";
constexpr const char* kSkippedConfigRule = "autotuner-skipped-config";
// GitHub code scanning truncates rule descriptions beyond 1024 characters.
constexpr std::size_t kMaxShortDescription = 1000;

std::string truncated(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;  // a whole code point
  return text.substr(0, cut) + "\xE2\x80\xA6";
}

std::string triton_of(const CellResult& cell) {
  return cell.triton_version.empty() ? cell.triton : cell.triton_version;
}

// Percent-encodes a path for a URI: unreserved characters and '/' stay; ':' is encoded too, so a
// relative reference's first segment is never read as a scheme.
std::string uri_path(const std::string& path) {
  std::string out;
  for (const unsigned char c : path) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    out += keep ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
  }
  return out;
}

struct Where {
  std::string file;
  int line = 0;
};

class UriMaker {
 public:
  UriMaker() {
    std::error_code ec;
    cwd_ = std::filesystem::current_path(ec);
    if (ec) cwd_.clear();
  }

  // A path under the current folder becomes repo-relative (uriBaseId %SRCROOT%), as code scanning
  // wants; anything else an absolute file:// URI.
  nlohmann::json artifact_location(const std::string& file) {
    std::filesystem::path path(file);
    if (path.is_relative() && !cwd_.empty()) path = cwd_ / path;
    path = path.lexically_normal();
    if (!cwd_.empty()) {
      // `path` is absolute here, so it comes back relative only when it is inside cwd_.
      const auto relative = util::relative_if_inside(path, cwd_);
      if (relative.is_relative() && relative.string() != ".") {
        used_srcroot_ = true;
        return {{"uri", uri_path(relative.generic_string())}, {"uriBaseId", kSrcRoot}};
      }
    }
    return {{"uri", "file://" + uri_path(path.generic_string())}};
  }

  [[nodiscard]] std::optional<nlohmann::json> original_uri_base_ids() const {
    if (!used_srcroot_) return std::nullopt;
    auto root = uri_path(cwd_.generic_string());
    if (root.empty() || root.back() != '/') root += '/';  // a base URI must end with a slash
    return nlohmann::json{{kSrcRoot, {{"uri", "file://" + root}}}};
  }

 private:
  std::filesystem::path cwd_;
  bool used_srcroot_ = false;
};

// The manifest, when it is a file (`--demo` and friends are not).
std::string manifest_file(const Report& report) {
  std::string manifest = report.manifest;
  if (manifest.empty() && report.environment.contains("options") &&
      report.environment["options"].is_object()) {
    const auto& options = report.environment["options"];
    if (options.contains("manifest") && options["manifest"].is_string())
      manifest = options["manifest"].get<std::string>();
  }
  if (manifest.empty() || manifest.front() == '-') return {};
  return manifest;
}

// Where a failing cell points: the line the compiler blamed, else the kernel's def, else the def
// as another cell of the same row recorded it (cells that failed before the def was located),
// else the manifest's file, else nowhere.
std::optional<Where> locate(const CellResult& cell,
                            const std::map<std::string, SourceLocation>& defs,
                            const std::string& manifest) {
  if (cell.error_source && !cell.error_source->file.empty())
    return Where{cell.error_source->file, cell.error_source->line};
  if (cell.kernel_source && !cell.kernel_source->file.empty())
    return Where{cell.kernel_source->file, cell.kernel_source->line};
  if (const auto it = defs.find(cell.kernel); it != defs.end())
    return Where{it->second.file, it->second.line};
  if (!manifest.empty()) return Where{manifest, 0};
  return std::nullopt;
}

// nlohmann::json refuses to dump invalid UTF-8 (compiler output can hold anything): every string
// from a cell goes through util::valid_utf8 (U+FFFD for invalid sequences) so the SARIF file can
// always be written.
nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(util::valid_utf8(s));
}

nlohmann::json text(const std::string& s) { return {{"text", util::valid_utf8(s)}}; }

nlohmann::json rule_for(const FailureGroup& group, const CellResult& first) {
  const auto summary = describe_failure(first);
  std::string full =
      first.why.empty()
          ? summary +
                "\nNo explanation is known for this failure yet: see the cell's log in "
                "the JSON report."
          : summary + "\nWhy: " + first.why;
  std::string help = full;
  // GitHub renders help.markdown: the compiler's text is code or escaped prose (as --markdown).
  std::string markdown =
      fmt::format("**{}** {}: {}\n\n", to_string(first.kind),
                  util::markdown_text(failure_where(first)), util::markdown_code(first.message));
  markdown += first.why.empty() ? "No explanation is known for this failure yet."
                                : "**Why:** " + util::markdown_text(first.why);
  if (!first.link.empty()) {
    help += "\nSee: " + first.link;
    markdown += is_upstream_link(first.link) ? fmt::format("\n\nSee: <{}>", first.link)
                                             : "\n\nSee: " + util::markdown_code(first.link);
  }
  const auto kind = to_string(first.kind);
  nlohmann::json rule = {
      {"id", "portcheck/" + group.fingerprint},
      {"name", fmt::format("{}-in-{}", kind, first.stage.empty() ? "unknown-stage" : first.stage)},
      {"shortDescription", text(truncated(summary, kMaxShortDescription))},
      {"fullDescription", text(full)},
      {"help", {{"text", util::valid_utf8(help)}, {"markdown", util::valid_utf8(markdown)}}},
      {"defaultConfiguration", {{"level", "error"}}},
      {"properties",
       {{"fingerprint", group.fingerprint},
        {"group", group.letter},
        {"kind", kind},
        {"stage", or_null(first.stage)},
        {"pass", or_null(first.pass)},
        {"tags", {"triton-portcheck", "portability", kind}}}},
  };
  if (!first.link.empty()) rule["helpUri"] = util::valid_utf8(first.link);
  return rule;
}

// The one rule of every config an autotuner skips: information, not a failure.
nlohmann::json skipped_config_rule() {
  const std::string summary =
      "A config of an autotuned launch that fails on this target with what Triton's autotuner "
      "skips (OutOfResources, PTXASError, CompileTimeAssertionFailure, as the release catches "
      "them): the launch runs the best of the configs that remain.";
  return {
      {"id", std::string("portcheck/") + kSkippedConfigRule},
      {"name", "config-skipped-by-autotuner"},
      {"shortDescription", text(summary)},
      {"fullDescription", text(summary)},
      {"help", {{"text", summary}, {"markdown", summary}}},
      {"defaultConfiguration", {{"level", "note"}}},
      {"properties", {{"tags", {"triton-portcheck", "portability", "autotune"}}}},
  };
}

// The rules (one per failure group the kernel is answerable for), where each fingerprint's rule
// sits in them, and each fingerprint's group letter.
struct Rules {
  nlohmann::json list = nlohmann::json::array();
  std::map<std::string, std::size_t> index;
  std::map<std::string, std::string> letters;

  [[nodiscard]] std::size_t index_of(const std::string& fingerprint) const {
    const auto it = index.find(fingerprint);
    return it == index.end() ? 0 : it->second;
  }
  [[nodiscard]] std::string letter_of(const std::string& fingerprint) const {
    const auto it = letters.find(fingerprint);
    return it == letters.end() ? std::string() : it->second;
  }
};

Rules rules_of(const Report& report) {
  Rules rules;
  for (const auto& group : group_failures(report)) {
    rules.letters[group.fingerprint] = group.letter;
    // Described by its first cell the kernel is answerable for; none: no rule (notifications).
    const auto it = std::find_if(group.cells.begin(), group.cells.end(), [](const CellResult* c) {
      return c->kind != FailureKind::internal_error;
    });
    if (it == group.cells.end()) continue;
    rules.index[group.fingerprint] = rules.list.size();
    rules.list.push_back(rule_for(group, **it));
  }
  if (std::any_of(report.cells.begin(), report.cells.end(),
                  [](const CellResult& c) { return c.status == Status::skipped; })) {
    rules.index[kSkippedConfigRule] = rules.list.size();
    rules.list.push_back(skipped_config_rule());
  }
  return rules;
}

nlohmann::json cell_properties(const CellResult& cell, const Rules& rules) {
  return {
      {"row", cell.kernel},
      {"kernel", cell.base_kernel},
      {"variant", or_null(cell.variant)},
      {"target", cell.target},
      {"triton", cell.triton},
      {"triton_version", cell.triton_version},
      {"status", to_string(cell.status)},
      {"kind", to_string(cell.kind)},
      {"stage", or_null(cell.stage)},
      {"pass", or_null(cell.pass)},
      {"fingerprint", cell.fingerprint},
      {"group", or_null(rules.letter_of(cell.fingerprint))},
      {"new", cell.is_new},
      {"compile_s", cell.compile_s},
  };
}

std::string headline(const CellResult& cell) {
  return fmt::format("{} on {} (Triton {}): {}{}", cell.kernel, cell.target, triton_of(cell),
                     describe_failure(cell),
                     cell.status == Status::xfail ? " [expected failure]" : "");
}

nlohmann::json internal_error_notification(const CellResult& cell, const Rules& rules) {
  return {
      {"level", "error"},
      {"message",
       text("triton-portcheck internal error (a bug of the tool, not of the kernel) in " +
            headline(cell))},
      {"descriptor", {{"id", kInternalErrorId}}},
      {"properties", cell_properties(cell, rules)},
  };
}

// The result of a cell whose compile failed: where it points, and its baseline state and
// suppression (see the top of this file).
class ResultMaker {
 public:
  ResultMaker(const Report& report, const Rules& rules)
      : report_(report), rules_(rules), manifest_(manifest_file(report)) {
    for (const auto& c : report.cells)
      if (c.kernel_source && !c.kernel_source->file.empty())
        defs_.emplace(c.kernel, *c.kernel_source);
  }

  nlohmann::json result(const CellResult& cell) {
    const bool expected = cell.status == Status::xfail;
    const bool skipped = cell.status == Status::skipped;
    const std::string rule = skipped ? kSkippedConfigRule : cell.fingerprint;
    nlohmann::json result = {
        {"ruleId", "portcheck/" + rule},
        {"ruleIndex", rules_.index_of(rule)},
        {"level", expected || skipped || cell.foreign_launch_verdict() ? "note"
                  : cell.in_baseline                                   ? "warning"
                                                                       : "error"},
        {"message", text(headline(cell))},
        // Stable across runs, machines and paths: the failure itself and the cell it happened in.
        // The Triton label ("current"), not its version, so an upgrade keeps the alert's identity.
        {"partialFingerprints",
         {{"portcheckFingerprint/v1",
           util::valid_utf8(fmt::format("{}|{}|{}|{}", cell.fingerprint, cell.kernel, cell.target,
                                        cell.triton))}}},
        {"properties", cell_properties(cell, rules_)},
    };
    if (const auto where = locate(cell, defs_, manifest_)) {
      nlohmann::json physical = {{"artifactLocation", uris_.artifact_location(where->file)}};
      if (where->line > 0) physical["region"] = {{"startLine", where->line}};
      result["locations"] = nlohmann::json::array({{{"physicalLocation", physical}}});
    }
    if (report_.baseline.applied && cell.status == Status::failed)
      result["baselineState"] = cell.in_baseline ? "unchanged" : "new";
    if (expected)
      result["suppressions"] = nlohmann::json::array(
          {{{"kind", "external"},
            {"status", "accepted"},
            {"justification",
             "expected failure: the manifest lists this kernel x target as failing"}}});
    return result;
  }

  [[nodiscard]] const UriMaker& uris() const { return uris_; }

 private:
  const Report& report_;
  const Rules& rules_;
  std::string manifest_;
  std::map<std::string, SourceLocation> defs_;
  UriMaker uris_;
};

nlohmann::json driver_of(const Report& report, const Rules& rules, bool internal_errors) {
  nlohmann::json driver = {
      {"name", "triton-portcheck"},
      {"version", report.tool_version.empty() ? "unknown" : report.tool_version},
      {"rules", rules.list},
  };
  if (internal_errors)
    driver["notifications"] = nlohmann::json::array(
        {{{"id", kInternalErrorId},
          {"shortDescription",
           text("An internal error of triton-portcheck: the cell has no verdict.")},
          {"defaultConfiguration", {{"level", "error"}}}}});
  // Anything that is not a semantic version (a git describe, "unknown") stays out of
  // semanticVersion.
  if (!report.tool_version.empty() &&
      std::isdigit(static_cast<unsigned char>(report.tool_version.front())))
    driver["semanticVersion"] = report.tool_version;
  return driver;
}

nlohmann::json invocation_of(const Report& report, const nlohmann::json& notifications) {
  nlohmann::json invocation = {
      {"executionSuccessful", !report.incomplete() && notifications.empty()},
  };
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = notifications;
  if (report.environment.contains("started") && report.environment["started"].is_string())
    invocation["startTimeUtc"] = report.environment["started"];
  if (report.environment.contains("host") && report.environment["host"].is_string())
    invocation["machine"] = util::valid_utf8(report.environment["host"].get<std::string>());
  return invocation;
}

nlohmann::json run_properties(const Report& report) {
  std::map<std::string, int> counts{{"ok", 0}, {"failed", 0}, {"xfail", 0}, {"xpass", 0}};
  for (const auto& cell : report.cells) ++counts[to_string(cell.status)];
  nlohmann::json properties = {
      {"interrupted", report.interrupted},
      {"wall_s", report.wall_s},
      {"targets", report.targets},
      {"summary",
       {{"cells", report.cells.size()},
        {"ok", counts["ok"]},
        {"failed", counts["failed"]},
        {"xfail", counts["xfail"]},
        {"xpass", counts["xpass"]}}},
  };
  if (report.environment.contains("triton")) properties["triton"] = report.environment["triton"];
  if (report.baseline.applied)
    properties["baseline"] = baseline_summary_json(report.baseline, util::valid_utf8);
  return properties;
}

}  // namespace

nlohmann::json render_sarif(const Report& report) {
  const auto rules = rules_of(report);
  ResultMaker maker(report, rules);
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json notifications = nlohmann::json::array();
  for (const auto& cell : report.cells) {
    if (!cell.failed_outcome() && cell.status != Status::skipped) continue;
    if (cell.kind == FailureKind::internal_error)
      notifications.push_back(internal_error_notification(cell, rules));
    else
      results.push_back(maker.result(cell));
  }

  nlohmann::json run = {
      {"tool", {{"driver", driver_of(report, rules, !notifications.empty())}}},
      {"invocations", nlohmann::json::array({invocation_of(report, notifications)})},
      {"results", results},
      {"properties", run_properties(report)},
      {"automationDetails", {{"description", text(std::string(kCompileOnlyDisclaimer))}}},
  };
  if (const auto bases = maker.uris().original_uri_base_ids()) run["originalUriBaseIds"] = *bases;

  return {
      {"$schema", kSchema},
      {"version", "2.1.0"},
      {"runs", nlohmann::json::array({run})},
  };
}

}  // namespace portcheck
