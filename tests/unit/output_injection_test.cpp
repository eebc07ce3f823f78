// Hostile text (tests/unit/data/hostile_strings.json) in every field a report shows, through every
// output format: nothing in it may act on a terminal, a CI log, a Markdown renderer or a parser.
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/report/github.hpp"
#include "src/report/gitlab.hpp"
#include "src/report/html.hpp"
#include "src/report/junit.hpp"
#include "src/report/markdown.hpp"
#include "src/report/sarif.hpp"
#include "src/report/terminal.hpp"
#include "tests/unit/hostile_strings.hpp"
#include "tests/unit/report_fixtures.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck {
namespace {

using test_support::hostile_strings;

// The sample report with one hostile string in every text field of one failing cell per string,
// its row and target names, the environment, the baseline's fixed list and a launch warning.
Report hostile_report() {
  auto r = test_support::sample_report();
  const auto all = test_support::all_hostile_strings();
  r.tool_version = all;
  r.environment["triton"]["version"] = all;
  r.environment["python"]["version"] = all;
  int n = 0;
  for (const auto& [name, text] : hostile_strings()) {
    const auto& row = text;
    const auto target = "cuda:" + std::to_string(80 + n) + text;
    r.rows.push_back(row);
    r.targets.push_back(target);
    auto c = test_support::cell(row, target, FailureKind::frontend_error,
                                fmt::format("{:012x}", 0xabc000 + n), text, text);
    c.pass = text;
    c.why = text;
    c.link = text;
    c.log = text;
    c.error_source = SourceLocation{"/src/" + text + ".py", 3};
    c.launch = {{"problems", {text}}};
    r.cells.push_back(c);
    r.baseline.fixed.push_back({row, target, "current", "f", "mlir-error", text});
    ++n;
  }
  r.baseline.applied = true;
  r.baseline.origin = all;
  return r;
}

// No byte that acts on a terminal: C0 controls but newline, DEL, C1 controls, bidi overrides.
void expect_inert_on_a_terminal(const std::string& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    ASSERT_FALSE((c < 0x20 && c != '\n') || c == 0x7f) << "byte " << int(c) << " at " << i;
  }
  EXPECT_FALSE(std::regex_search(out, std::regex("\xc2[\x80-\x9f]")));
  EXPECT_FALSE(std::regex_search(out, std::regex("\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")));
}

// No line a GitHub runner would take for a workflow command.
void expect_no_workflow_command(const std::string& out) {
  for (const auto& line : util::split_lines(out)) {
    EXPECT_FALSE(std::regex_search(line, std::regex(R"(^\s*::)"))) << line;
    EXPECT_EQ(line.find("##["), std::string::npos) << line;
  }
}

TEST(OutputInjection, TerminalShowsControlsEscaped) {
  const auto out = render_terminal(hostile_report(), TerminalStyle{false});
  expect_inert_on_a_terminal(out);
  expect_no_workflow_command(out);
  EXPECT_NE(out.find("\\e[2J\\e]0;pwned\\x07"), std::string::npos) << out;
  EXPECT_NE(out.find("\n\\::warning file=x.py,line=1::a name"), std::string::npos) << out;
  EXPECT_NE(out.find("old ##\\[error]v1"), std::string::npos) << out;
}

TEST(OutputInjection, TerminalKeepsOnlyItsOwnColours) {
  auto out = render_terminal(hostile_report(), TerminalStyle{true});
  EXPECT_NE(out.find("\033[31m"), std::string::npos);
  // Ours: reset, green, red, yellow, magenta, dim, each around a matrix label.
  out = std::regex_replace(out, std::regex("\033\\[(0|2|3[1235])m"), "");
  expect_inert_on_a_terminal(out);
}

TEST(OutputInjection, GithubAnnotationsAreOneCommandEach) {
  const auto report = hostile_report();
  const auto out = github_annotations(report, "/src");
  std::size_t fresh = 0;
  for (const auto& c : report.cells) fresh += c.is_new ? 1 : 0;
  const auto lines = util::split_lines(out);
  EXPECT_EQ(lines.size(), fresh);
  for (const auto& line : lines) {
    EXPECT_TRUE(line.starts_with("::error ")) << line;
    // Properties end at the first "::": none inside a value.
    const auto end = line.find("::", 2);
    const auto properties = line.substr(8, end - 8);
    EXPECT_EQ(properties.find(':'), std::string::npos) << properties;
    EXPECT_EQ(line.find('\r'), std::string::npos);
  }
  expect_inert_on_a_terminal(out);
  EXPECT_NE(out.find("::100%25 done %250A::error::x, a:b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("first%0A::warning::injected%0A  ::add-mask::secret\\r::error"),
            std::string::npos)
      << out;
}

// What the Markdown says outside its code spans (each opened and closed by an equal backtick run;
// a backslash-escaped backtick opens none).
std::string outside_code_spans(const std::string& markdown) {
  std::string out;
  for (std::size_t i = 0; i < markdown.size();) {
    if (markdown[i] == '\\' && i + 1 < markdown.size()) {  // an escaped character is only text
      out += "#";
      i += 2;
      continue;
    }
    if (markdown[i] != '`') {
      out += markdown[i++];
      continue;
    }
    const auto run_end = markdown.find_first_not_of('`', i);
    const auto fence = markdown.substr(i, run_end - i);
    auto close = markdown.find(fence, run_end);
    while (close != std::string::npos && close + fence.size() < markdown.size() &&
           markdown[close + fence.size()] == '`')
      close = markdown.find(fence, markdown.find_first_not_of('`', close));
    EXPECT_NE(close, std::string::npos) << "unclosed code span at " << i;
    if (close == std::string::npos) return out;
    // A code span must not cross a line: tables and list items are lines.
    EXPECT_EQ(markdown.substr(i, close - i).find('\n'), std::string::npos);
    out += "(code)";
    i = close + fence.size();
  }
  return out;
}

void expect_nothing_active(const std::string& md) {
  expect_inert_on_a_terminal(md);
  const auto prose = outside_code_spans(md);
  EXPECT_EQ(prose.find("]("), std::string::npos) << prose;
  EXPECT_EQ(prose.find("]["), std::string::npos) << prose;
  EXPECT_FALSE(std::regex_search(prose, std::regex("@[A-Za-z0-9]"))) << prose;
  EXPECT_FALSE(std::regex_search(prose, std::regex("https?:/|www\\.|javascript:"))) << prose;
  EXPECT_FALSE(std::regex_search(prose, std::regex("<[a-z/!]"))) << prose;
}

// GitHub code scanning renders each SARIF rule's help.markdown.
TEST(OutputInjection, SarifHelpMarkdownHasNothingActive) {
  const auto sarif = render_sarif(hostile_report());
  std::size_t rules = 0;
  for (const auto& rule : sarif["runs"][0]["tool"]["driver"]["rules"]) {
    expect_nothing_active(rule["help"]["markdown"].get<std::string>());
    ++rules;
  }
  EXPECT_GT(rules, hostile_strings().size());
}

TEST(OutputInjection, MarkdownHasNothingActive) {
  const auto md = render_markdown(hostile_report());
  expect_nothing_active(md);
  // Every table line has exactly the table's columns: no '|' from a name or message breaks one.
  const auto report = hostile_report();
  for (const auto& line : util::split_lines(md)) {
    if (!line.starts_with("| ")) continue;
    const auto cells = std::regex_replace(line, std::regex(R"(\\\|)"), "");
    EXPECT_EQ(std::count(cells.begin(), cells.end(), '|'), long(report.targets.size()) + 2) << line;
  }
}

TEST(OutputInjection, MarkdownKeepsTheUpstreamLinkOfTheKnownFailureTable) {
  auto r = test_support::sample_report();
  test_support::cell_at(r, "gamma_ratio", "hip:gfx942").link =
      "https://github.com/triton-lang/triton/issues/10375";
  EXPECT_NE(
      render_markdown(r).find("[upstream](https://github.com/triton-lang/triton/issues/10375)"),
      std::string::npos);
  test_support::cell_at(r, "gamma_ratio", "hip:gfx942").link =
      "https://github.com/a/b/issues/1)![x](http://evil/p.png";
  const auto md = render_markdown(r);
  EXPECT_EQ(md.find("[upstream]"), std::string::npos) << md;
  EXPECT_NE(md.find("upstream: `https://github.com/a/b/issues/1)![x](http://evil/p.png`"),
            std::string::npos)
      << md;
}

TEST(OutputInjection, XmlAndJsonFormatsStayWellFormed) {
  const auto report = hostile_report();
  const auto xml = render_junit(report);
  EXPECT_EQ(xml.find("</testcase> "), std::string::npos);
  EXPECT_EQ(xml.find("<script"), std::string::npos);
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
  const auto sarif = render_sarif(report).dump();
  EXPECT_TRUE(nlohmann::json::accept(sarif));
  EXPECT_EQ(sarif.find('\x1b'), std::string::npos);  // JSON escapes controls as \u001b
  const auto gitlab = render_gitlab_codequality(report, "/src");
  EXPECT_TRUE(nlohmann::json::accept(gitlab));
  EXPECT_EQ(gitlab.find('\x1b'), std::string::npos);
  const auto html = render_html(report);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_EQ(html.find("</testcase>"), std::string::npos);
}

}  // namespace
}  // namespace portcheck
