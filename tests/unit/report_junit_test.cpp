#include "src/report/junit.hpp"

#include <regex>

#include <gtest/gtest.h>

#include "tests/unit/report_fixtures.hpp"

namespace portcheck {
namespace {

using test_support::cell;

// Two targets by two rows, one cell of each outcome JUnit tells apart: ok, xpass, a failure (with
// its why, link and log) and an xfail; the shared sample's environment, on a CI runner.
Report sample_report() {
  auto r = test_support::sample_report();
  test_support::on_ci_runner(r);
  r.manifest = "--demo";
  r.targets = {"cuda:75", "cuda:90"};
  r.rows = {"axpy", "dot_small[int8]"};
  auto mlir = test_support::extf_failure("cuda:75");
  mlir.why = "int8 dots take the FMA path on sm_75.";
  mlir.link = "https://github.com/triton-lang/triton/issues/9349";
  mlir.log = "Traceback (most recent call last):\nerror: failed";
  r.cells = {cell("axpy", "cuda:75"), test_support::passed_unexpectedly(cell("axpy", "cuda:90")),
             mlir, test_support::expected_extf_failure("cuda:90")};
  return r;
}

TEST(JunitReport, Golden) {
  const std::string expected = R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="triton-portcheck" tests="4" failures="1" errors="0" skipped="1" time="12.500">
  <testsuite name="triton-portcheck" tests="4" failures="1" errors="0" skipped="1" time="12.500" timestamp="2026-11-30T01:20:00" hostname="runner-7">
    <properties>
      <property name="tool_version" value="0.1.0"/>
      <property name="triton" value="3.9.0"/>
      <property name="python" value="3.11.7"/>
      <property name="manifest" value="--demo"/>
      <property name="targets" value="cuda:75,cuda:90"/>
      <property name="interrupted" value="false"/>
      <property name="disclaimer" value="Compile-only check, nothing was run on a GPU: a passing cell means Triton produced a binary for that target. It does not prove that the kernel launches on the device (its launch limits are predicted from the compiled metadata, not tried on a device), computes correct results, or performs well."/>
    </properties>
    <testcase classname="axpy" name="cuda:75 triton 3.9.0" time="0.250"/>
    <testcase classname="axpy" name="cuda:90 triton 3.9.0" time="0.250">
      <system-out>expected failure did not happen: this kernel now compiles for cuda:90; the manifest's expectation can be removed</system-out>
    </testcase>
    <testcase classname="dot_small[int8]" name="cuda:75 triton 3.9.0" time="1.500">
      <failure message="mlir-error in pass TritonGPUAccelerateMatmul (stage ttgir): 'arith.extf' op operand #0 must be floating-point-like" type="mlir-error">mlir-error in pass TritonGPUAccelerateMatmul (stage ttgir): 'arith.extf' op operand #0 must be floating-point-like
fingerprint: bbbbbbbbbbbb
why: int8 dots take the FMA path on sm_75.
see: https://github.com/triton-lang/triton/issues/9349

Traceback (most recent call last):
error: failed</failure>
    </testcase>
    <testcase classname="dot_small[int8]" name="cuda:90 triton 3.9.0" time="0.250">
      <skipped message="expected failure: mlir-error in stage ttgir: 'arith.extf' op operand #0 must be floating-point-like"/>
    </testcase>
  </testsuite>
</testsuites>
)";
  EXPECT_EQ(render_junit(sample_report()), expected);
}

TEST(JunitReport, InternalErrorIsAnErrorNotAFailure) {
  auto r = sample_report();
  r.cells.push_back(cell("axpy", "hip:gfx942", FailureKind::internal_error, "ffffffffffff",
                         "KeyError: 'x'", "ttir"));
  r.cells.push_back(cell("axpy", "hip:gfx950", FailureKind::import_error, "eeeeeeeeeeee",
                         "ImportError: no mypkg", "import"));
  const auto xml = render_junit(r);
  EXPECT_NE(xml.find(R"(tests="6" failures="2" errors="1" skipped="1")"), std::string::npos) << xml;
  EXPECT_NE(
      xml.find(
          R"(<error message="internal-error in stage ttir: KeyError: 'x'" type="internal-error">)"),
      std::string::npos)
      << xml;
  EXPECT_NE(
      xml.find(
          R"(<failure message="import-error in stage import: ImportError: no mypkg" type="import-error">)"),
      std::string::npos)
      << xml;
}

TEST(JunitReport, BaselineFailureIsSkipped) {
  auto r = sample_report();
  r.baseline.applied = true;
  r.cells[2].in_baseline = true;
  r.cells[2].is_new = false;
  const auto xml = render_junit(r);
  EXPECT_NE(xml.find(R"(tests="4" failures="0" errors="0" skipped="2")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(<skipped message="known failure (baseline): mlir-error)"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos);
}

// The counts agree with the testcases: a launch-limit cell is a <failure> and counts in failures=
// (in skipped= when the baseline knows it), a cell only statically checked is <skipped> and counts
// in skipped= (CI dashboards read the counts, not the testcases).
TEST(JunitReport, CountsLaunchLimitAndUncheckedCells) {
  auto r = sample_report();
  auto launch = cell("axpy", "hip:gfx942", FailureKind::launch_limit, "cccccccccccc",
                     "needs 128 KiB of shared memory; the target has 64 KiB", "launch");
  launch.status = Status::launch;
  auto known_launch = launch;
  known_launch.target = "hip:gfx950";
  known_launch.in_baseline = true;
  known_launch.is_new = false;
  auto unchecked = cell("axpy", "cuda:100");
  unchecked.status = Status::unchecked;
  r.cells.insert(r.cells.end(), {launch, known_launch, unchecked});
  const auto xml = render_junit(r);
  EXPECT_NE(
      xml.find(
          R"(<testsuites name="triton-portcheck" tests="7" failures="2" errors="0" skipped="3")"),
      std::string::npos)
      << xml;
  EXPECT_NE(
      xml.find(
          R"(<testsuite name="triton-portcheck" tests="7" failures="2" errors="0" skipped="3")"),
      std::string::npos)
      << xml;
  // Each count is the number of elements of its kind.
  const auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = xml.find(needle); at != std::string::npos; at = xml.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<failure "), 2U);
  EXPECT_EQ(count("<skipped "), 3U);
  EXPECT_EQ(count("<error "), 0U);
}

TEST(JunitReport, EscapesNastyStrings) {
  Report r;
  r.tool_version = "0.1.0";
  r.targets = {"cuda:80"};
  r.rows = {"k<&>\"'"};
  auto c =
      cell("k<&>\"'", "cuda:80", FailureKind::frontend_error, "aaaaaaaaaaaa",
           std::string(
               "bad <tag> & \"quoted\" 'single'\ttab\nnewline\r\x01\x1b[31mred\x7f ]]> \xff end"),
           "frontend");
  static const char kLog[] =
      "log <a> & b ]]> c\x00\x08 d\r\n\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 \xed\xa0\x80 \xc0\xaf";
  c.log = std::string(kLog, sizeof(kLog) - 1);  // with its NUL
  r.cells.push_back(c);
  const auto xml = render_junit(r);

  EXPECT_NE(xml.find(R"(classname="k&lt;&amp;&gt;&quot;'")"), std::string::npos) << xml;
  // In the attribute: quotes escaped, tab/newline/CR as references, controls dropped, invalid
  // UTF-8 replaced; no raw markup.
  EXPECT_NE(
      xml.find(
          "message=\"frontend-error in stage frontend: bad &lt;tag&gt; &amp; &quot;quoted&quot; "
          "'single'&#9;tab&#10;newline&#13;[31mred\x7f ]]&gt; \xEF\xBF\xBD end\""),
      std::string::npos)
      << xml;
  // In the text: markup escaped, "]]>" broken up, NUL and backspace dropped, CR kept as a
  // reference, valid UTF-8 kept, encoded surrogates and overlong forms replaced.
  EXPECT_NE(xml.find("log &lt;a&gt; &amp; b ]]&gt; c d&#13;\n\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 "
                     "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD</failure>"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("]]>"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
  EXPECT_EQ(xml.find(std::string(1, '\0')), std::string::npos);
  EXPECT_EQ(xml.find('\r'), std::string::npos);
  // Every '&' starts a reference.
  EXPECT_FALSE(std::regex_search(xml, std::regex("&(?!(amp|lt|gt|quot|#9|#10|#13);)")));
}

TEST(JunitReport, InterruptedRunSaysSo) {
  auto r = sample_report();
  r.interrupted = true;
  r.cells.pop_back();
  const auto xml = render_junit(r);
  EXPECT_NE(xml.find(R"(<property name="interrupted" value="true"/>)"), std::string::npos);
  EXPECT_NE(xml.find("<system-err>interrupted"), std::string::npos);
  EXPECT_NE(xml.find(R"(tests="3")"), std::string::npos);
}

}  // namespace
}  // namespace portcheck
