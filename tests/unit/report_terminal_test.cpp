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

using test_support::sample_report;

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
