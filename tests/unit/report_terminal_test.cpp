#include "src/report/grouping.hpp"
#include "src/report/terminal.hpp"

#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "tests/unit/report_fixtures.hpp"

#include "util/fs.hpp"

namespace portcheck {
namespace {

const std::filesystem::path kData = PORTCHECK_TEST_DATA;

using test_support::cell;

Report sample_report() {
  Report r;
  r.tool_version = "0.1.0";
  r.environment = {{"triton", {{"version", "3.9.0"}}}, {"python", {{"version", "3.11.7"}}}};
  r.targets = {"cuda:80", "cuda:90", "hip:gfx942"};
  r.rows = {"axpy", "gamma_ratio", "dot_small[int8]"};
  r.wall_s = 12.5;
  r.cells.push_back(cell("axpy", "cuda:80"));
  r.cells.push_back(cell("axpy", "cuda:90"));
  r.cells.push_back(cell("axpy", "hip:gfx942"));
  r.cells.push_back(cell("gamma_ratio", "cuda:80"));
  r.cells.push_back(cell("gamma_ratio", "cuda:90"));
  auto gamma =
      cell("gamma_ratio", "hip:gfx942", FailureKind::frontend_error, "aaaaaaaaaaaa",
           "AttributeError: module 'triton.language.extra.hip.libdevice' has no attribute 'tgamma'",
           "frontend");
  gamma.why = "HIP's libdevice has no tgamma.";
  r.cells.push_back(gamma);
  auto mlir = cell("dot_small[int8]", "cuda:80", FailureKind::mlir_error, "bbbbbbbbbbbb",
                   "'arith.extf' op operand #0 must be floating-point-like", "ttgir");
  mlir.pass = "TritonGPUAccelerateMatmul";
  mlir.compile_s = 1.5;
  r.cells.push_back(mlir);
  auto expected = cell("dot_small[int8]", "cuda:90", FailureKind::mlir_error, "bbbbbbbbbbbb",
                       "'arith.extf' op operand #0 must be floating-point-like", "ttgir");
  expected.status = Status::xfail;
  expected.is_new = false;
  r.cells.push_back(expected);
  auto xpass = cell("dot_small[int8]", "hip:gfx942");
  xpass.status = Status::xpass;
  r.cells.push_back(xpass);
  return r;
}

// Set UPDATE_GOLDEN=1 to rewrite the golden file after an intended change; review the diff.
void expect_golden(const std::string& text, const std::string& name) {
  const auto path = kData / name;
  if (std::getenv("UPDATE_GOLDEN") != nullptr) util::atomic_write_file(path, text);
  EXPECT_EQ(text, util::read_file(path));
}

TEST(TerminalReport, MatchesGoldenFile) {
  expect_golden(render_terminal(sample_report(), TerminalStyle{false}), "terminal_plain.golden");
}

TEST(TerminalReport, ColourDoesNotMoveColumns) {
  const auto plain = render_terminal(sample_report(), TerminalStyle{false});
  const auto coloured = render_terminal(sample_report(), TerminalStyle{true});
  EXPECT_NE(plain, coloured);
  EXPECT_NE(coloured.find("\033[31mfront:A\033[0m"), std::string::npos);
  EXPECT_EQ(std::regex_replace(coloured, std::regex("\033\\[[0-9;]*m"), ""), plain);
}

TEST(TerminalReport, GroupsShareLettersInMatrixOrder) {
  const auto groups = group_failures(sample_report());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].letter, "A");
  EXPECT_EQ(groups[0].fingerprint, "aaaaaaaaaaaa");
  EXPECT_EQ(groups[1].letter, "B");
  EXPECT_EQ(groups[1].cells.size(), 2u);  // the xfail cell shares the group
}

TEST(TerminalReport, InterruptedRunShowsUnfinishedCells) {
  auto r = sample_report();
  r.cells.pop_back();
  r.interrupted = true;
  const auto text = render_terminal(r, TerminalStyle{false});
  EXPECT_NE(text.find("INTERRUPTED"), std::string::npos);
  EXPECT_NE(text.find("?"), std::string::npos);
}

}  // namespace
}  // namespace portcheck
