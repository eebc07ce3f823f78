#include "src/report/junit.hpp"

#include <fmt/format.h>

#include "src/report/terminal.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// XML 1.0 allows #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
bool xml_char(char32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

// Escapes `in` for XML text (attribute == false) or a double-quoted attribute value. Invalid
// UTF-8 becomes U+FFFD; characters XML 1.0 cannot carry at all (NUL, ESC and the other controls)
// are dropped. Tab, newline and carriage return are written as character references in attributes
// (a parser would normalise them to spaces) and CR also in text (a parser would turn it into LF).
// '>' is always escaped, so "]]>" never appears.
std::string xml_escape(const std::string& in, bool attribute) {
  std::string out;
  out.reserve(in.size() + in.size() / 8);
  for (const char32_t cp : util::utf8_codepoints(in)) {
    if (!xml_char(cp)) continue;
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        util::append_utf8(out, cp);
    }
  }
  return out;
}

std::string attr(const std::string& s) { return xml_escape(s, true); }
std::string text(const std::string& s) { return xml_escape(s, false); }

std::string seconds(double s) { return fmt::format("{:.3f}", s < 0 ? 0.0 : s); }

// The body of a <failure>/<error>: what the terminal report says about the cell, then the log.
std::string failure_body(const CellResult& cell) {
  std::string body = describe_failure(cell) + "\n";
  const auto& loc = cell.error_source ? cell.error_source : cell.kernel_source;
  if (loc && !loc->file.empty())
    body += loc->line > 0 ? fmt::format("at {}:{}\n", display_path(loc->file), loc->line)
                          : fmt::format("at {}\n", display_path(loc->file));
  if (!cell.fingerprint.empty()) body += "fingerprint: " + cell.fingerprint + "\n";
  if (!cell.why.empty()) body += "why: " + cell.why + "\n";
  if (!cell.link.empty()) body += "see: " + cell.link + "\n";
  if (!cell.log.empty()) body += "\n" + cell.log;
  return body;
}

std::string env_string(const nlohmann::json& env, const char* key, const char* sub = nullptr) {
  if (!env.is_object() || !env.contains(key)) return {};
  const auto& v = env[key];
  if (sub == nullptr) return v.is_string() ? v.get<std::string>() : std::string();
  if (!v.is_object() || !v.contains(sub) || !v[sub].is_string()) return {};
  return v[sub].get<std::string>();
}

// Which element testcase_body gives a cell, so that the counts are the elements' counts.
enum class Outcome { passed, failure, error, skipped };

Outcome outcome_of(const CellResult& c) {
  switch (c.status) {
    case Status::ok:
    case Status::xpass:
      return Outcome::passed;
    case Status::xfail:
    case Status::unchecked:
    case Status::skipped:
      return Outcome::skipped;
    case Status::launch:
    case Status::failed:
      break;
  }
  if (c.in_baseline || c.foreign_launch_verdict()) return Outcome::skipped;
  return c.kind == FailureKind::internal_error ? Outcome::error : Outcome::failure;
}

// `tests="4" failures="1" errors="0" skipped="2" time="12.500"`, of the suites and the suite.
std::string count_attributes(const Report& report) {
  int failures = 0;
  int errors = 0;
  int skipped = 0;
  for (const auto& c : report.cells) {
    const auto outcome = outcome_of(c);
    failures += outcome == Outcome::failure ? 1 : 0;
    errors += outcome == Outcome::error ? 1 : 0;
    skipped += outcome == Outcome::skipped ? 1 : 0;
  }
  return fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}" time="{}")",
                     report.cells.size(), failures, errors, skipped, seconds(report.wall_s));
}

std::string suite_attributes(const Report& report, const std::string& counts) {
  std::string attrs = fmt::format("name=\"triton-portcheck\" {}", counts);
  // JUnit's timestamp is an ISO 8601 date-time without a zone (the common XSD's pattern).
  const auto started = env_string(report.environment, "started");
  if (started.size() >= 19 && started[4] == '-' && started[10] == 'T')
    attrs += fmt::format(" timestamp=\"{}\"", attr(started.substr(0, 19)));
  if (const auto host = env_string(report.environment, "host"); !host.empty())
    attrs += fmt::format(" hostname=\"{}\"", attr(host));
  return attrs;
}

std::string properties(const Report& report) {
  std::string out = "    <properties>\n";
  const auto property = [&](const std::string& name, const std::string& value) {
    if (!value.empty())
      out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", attr(name), attr(value));
  };
  property("tool_version", report.tool_version);
  property("triton", env_string(report.environment, "triton", "version"));
  property("python", env_string(report.environment, "python", "version"));
  property("manifest", report.manifest);
  std::string targets;
  for (const auto& t : report.targets) targets += (targets.empty() ? "" : ",") + t;
  property("targets", targets);
  property("interrupted", report.interrupted ? "true" : "false");
  property("disclaimer", std::string(kCompileOnlyDisclaimer));
  return out + "    </properties>\n";
}

std::string skipped(const std::string& message) {
  return fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", attr(message));
}

// What follows a cell's `<testcase ... time="..."`: "/>" or its outcome and "</testcase>".
// How cells map to JUnit outcomes:
//  - ok, and xpass (passed where a failure was expected; a <system-out> note says the
//    expectation can go): a passing testcase.
//  - failed: <failure type="KIND">, for every kind the kernel is answerable for, import-error
//    included (the user's module did not import: the kernel under test is broken, not the test).
//  - failed with kind internal-error: <error>. JUnit's <error> means the test itself broke, and an
//    internal error is a bug of triton-portcheck that gives the cell no verdict.
//  - xfail (failed where the manifest expects it): <skipped message="expected failure: ...">, as
//    pytest reports xfail, so CI does not go red for failures the user accepted.
//  - skipped (a config of an autotuned launch that its autotuner skips on the target, while the
//    launch keeps others): <skipped message="config skipped by the autotuner: ...">.
//  - failed but already in the --baseline (not new, so not what makes the exit code 1):
//    <skipped message="known failure (baseline): ...">, for the same reason.
std::string testcase_body(const CellResult& c) {
  switch (c.status) {
    case Status::ok:
      return "/>\n";
    case Status::xpass:
      return ">\n      <system-out>" +
             text("expected failure did not happen: this kernel now compiles for " + c.target +
                  "; the manifest's expectation can be removed") +
             "</system-out>\n    </testcase>\n";
    case Status::xfail:
      return skipped("expected failure: " + describe_failure(c));
    case Status::unchecked:
      return skipped("not compiled (--static-only) and not predicted to fail");
    case Status::skipped:
      return skipped("config skipped by the autotuner: " + describe_failure(c));
    case Status::launch:
    case Status::failed:
      break;
  }
  if (c.in_baseline) return skipped("known failure (baseline): " + describe_failure(c));
  if (c.foreign_launch_verdict())
    return skipped("another vendor's host choices: " + describe_failure(c));
  const char* element = outcome_of(c) == Outcome::error ? "error" : "failure";
  return fmt::format(">\n      <{} message=\"{}\" type=\"{}\">", element, attr(describe_failure(c)),
                     attr(to_string(c.kind))) +
         text(failure_body(c)) + fmt::format("</{}>\n    </testcase>\n", element);
}

}  // namespace

std::string render_junit(const Report& report) {
  const auto counts = count_attributes(report);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"triton-portcheck\" {}>\n", counts);
  out += fmt::format("  <testsuite {}>\n", suite_attributes(report, counts));
  out += properties(report);
  for (const auto& c : report.cells) {
    const auto triton = c.triton_version.empty() ? c.triton : c.triton_version;
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"", attr(c.kernel),
                       attr(fmt::format("{} triton {}", c.target, triton)), seconds(c.compile_s));
    out += testcase_body(c);
  }
  if (report.interrupted)
    out += "    <system-err>interrupted: only the cells that finished are listed</system-err>\n";
  if (!report.missing_shards.empty())
    out += fmt::format(
        "    <system-err>incomplete: shard {} missing, its cells are not listed</system-err>\n",
        attr(util::join(report.missing_shards, ", ")));
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace portcheck
