#include "src/report/grouping.hpp"
#include "src/report/kernel_rollup.hpp"
#include "src/report/markdown.hpp"
#include "src/report/terminal.hpp"

#include <fstream>
#include <regex>

#include <fmt/format.h>
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
  EXPECT_NE(text.find('?'), std::string::npos);
}

// A kernel of six rows on two targets, one row failing on hip:gfx942: a library's report.
Report many_rows_report() {
  Report r;
  r.tool_version = "0.2.0";
  r.targets = {"cuda:80", "hip:gfx942"};
  for (int i = 0; i < 6; ++i) {
    const auto row = fmt::format("softmax[B{}]", 32 << i);
    r.rows.push_back(row);
    for (const auto& target : r.targets) {
      const bool fails = i == 3 && target == "hip:gfx942";
      auto c = test_support::cell(
          row, target, fails ? FailureKind::frontend_error : FailureKind::none,
          fails ? "cccccccccccc" : "", fails ? "too big" : "", fails ? "frontend" : "");
      c.base_kernel = "softmax";
      c.variant = fmt::format("B{}", 32 << i);
      r.cells.push_back(c);
    }
  }
  r.rows.push_back("axpy");
  for (const auto& target : r.targets) r.cells.push_back(test_support::cell("axpy", target));
  return r;
}

TEST(TerminalReport, AKernelOfManyRowsIsOneLineWithItsFailingRowsUnderIt) {
  const auto text = render_terminal(many_rows_report(), TerminalStyle{false});
  EXPECT_NE(text.find("\nsoftmax (6 rows)  ok 6/6   ok 5/6 A\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  softmax[B256]   ok       front:A\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  softmax[B32] "), std::string::npos) << text;  // passing rows: summed up
  EXPECT_NE(text.find("\naxpy              ok       ok\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    softmax[B256] on hip:gfx942\n"), std::string::npos) << text;
}

TEST(TerminalReport, AnInterruptedRollupSaysHowManyRowsAreUnfinished) {
  auto r = many_rows_report();
  r.interrupted = true;
  // Four of softmax's rows finished on cuda:80, none of the last two on either target.
  std::erase_if(r.cells, [](const CellResult& c) {
    return c.kernel == "softmax[B1024]" || c.kernel == "softmax[B512]" ||
           (c.kernel == "softmax[B32]" && c.target == "hip:gfx942");
  });
  const auto text = render_terminal(r, TerminalStyle{false});
  EXPECT_NE(text.find("\nsoftmax (6 rows)  ok 4/6 (2 ?)  ok 2/6 A (3 ?)\n"), std::string::npos)
      << text;
}

TEST(TerminalReport, ExpandShowsEveryRow) {
  const auto text = render_terminal(many_rows_report(), TerminalStyle{false, true});
  EXPECT_EQ(text.find("(6 rows)"), std::string::npos) << text;
  for (int i = 0; i < 6; ++i)
    EXPECT_NE(text.find(fmt::format("\nsoftmax[B{}] ", 32 << i)), std::string::npos) << text;
}

TEST(TerminalReport, AGroupOverManyRowsOfAKernelIsOneFootnoteLine) {
  auto r = many_rows_report();
  for (auto& c : r.cells)
    if (c.base_kernel == "softmax" && c.target == "hip:gfx942") {
      c.kind = FailureKind::frontend_error;
      c.status = Status::failed;
      c.fingerprint = "cccccccccccc";
      c.message = "too big";
    }
  const auto text = render_terminal(r, TerminalStyle{false});
  EXPECT_NE(text.find("\nsoftmax (6 rows)             ok 6/6   front:A\n"), std::string::npos)
      << text;
  // Its six rows fail alike: one line under it (the rows share no facet: B32, B64, ...).
  EXPECT_NE(text.find("\n  6 rows, e.g. softmax[B32]  ok       front:A\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    softmax: 6 rows on hip:gfx942\n"), std::string::npos) << text;
  const auto expanded = render_terminal(r, TerminalStyle{false, true});
  EXPECT_NE(expanded.find("    softmax[B1024] on hip:gfx942\n"), std::string::npos) << expanded;
}

TEST(TerminalReport, SeveralTritonReleasesAreOneMatrixEachUnderItsVersion) {
  auto r = many_rows_report();
  const auto first = r.cells;
  for (auto c : first) {
    c.triton = "3.8.0";
    c.triton_version = "3.8.0";
    r.cells.push_back(c);
  }
  const auto text = render_terminal(r, TerminalStyle{false});
  const auto current = text.find("\ntriton 3.9.0 (current):\nkernel ");
  const auto older = text.find("\ntriton 3.8.0:\nkernel ");
  ASSERT_NE(current, std::string::npos) << text;
  ASSERT_NE(older, std::string::npos) << text;
  EXPECT_LT(current, older);
}

TEST(KernelRollup, LabelsCountOkRowsAndNameFailingGroups) {
  const std::map<std::string, std::string> letters{{"f1", "A"}, {"f2", "B"}};
  auto ok = test_support::cell("k[a]", "cuda:80");
  auto a = test_support::cell("k[b]", "cuda:80", FailureKind::mlir_error, "f1", "m", "ttgir");
  auto b =
      test_support::cell("k[c]", "cuda:80", FailureKind::frontend_error, "f2", "m", "frontend");
  auto unchecked = ok;
  unchecked.status = Status::unchecked;
  EXPECT_EQ(rollup_label({&ok, &ok}, letters), "ok 2/2");
  EXPECT_EQ(rollup_label({&ok, &a, &b}, letters), "ok 1/3 A,B");
  EXPECT_EQ(rollup_label({&a, &a}, letters), "mlir:A");
  EXPECT_EQ(rollup_label({&a, &b}, letters), "A,B");
  EXPECT_EQ(rollup_label({&unchecked}, letters), "·");
  EXPECT_EQ(rollup_label({}, letters), "-");
  // An interrupted run: the rows not yet done count in the total and are said.
  EXPECT_EQ(rollup_label({&ok, &ok}, letters, 3), "ok 2/5 (3 ?)");
  EXPECT_EQ(rollup_label({&ok, &a}, letters, 1), "ok 1/3 A (1 ?)");
  EXPECT_EQ(rollup_label({&a, &a}, letters, 2), "mlir:A (2 ?)");
  EXPECT_EQ(rollup_label({}, letters, 4), "(4 ?)");
  EXPECT_EQ(rollup_status({&ok, &a}), Status::failed);
}

// A captured library's kernel of 2,048 rows whose 512 fp8 rows are predicted to fail on cuda:80
// (the static pre-checks' verdict, pred:A!): the failure shared by hundreds of rows is one line.
Report library_report() {
  Report r;
  r.tool_version = "0.2.0";
  r.targets = {"cuda:80", "cuda:90"};
  const char* dtypes[] = {"fp16", "bf16", "fp32", "fp8e4nv"};
  for (int i = 0; i < 2048; ++i) {
    const std::string dtype = dtypes[i % 4];
    const auto variant = fmt::format("v{}-{}-b{}-w{}", i, dtype, 64 << (i % 3), 1 + i % 2);
    const auto row = "scale_rows[" + variant + "]";
    r.rows.push_back(row);
    for (const auto& target : r.targets) {
      const bool fails = dtype == "fp8e4nv" && target == "cuda:80";
      auto c = test_support::cell(row, target, fails ? FailureKind::predicted : FailureKind::none,
                                  fails ? "f8f8f8f8f8f8" : "",
                                  fails ? "fp8e4nv needs cuda:89 or later" : "",
                                  fails ? "frontend" : "");
      c.base_kernel = "scale_rows";
      c.variant = variant;
      r.cells.push_back(c);
    }
  }
  return r;
}

TEST(TerminalReport, RowsThatFailAlikeAreOneLineWithWhatTheyShare) {
  const auto text = render_terminal(library_report(), TerminalStyle{false});
  const auto lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_LT(lines, 60) << text;
  EXPECT_NE(text.find("\n  512 rows (fp8e4nv), e.g. scale_rows[v3-fp8e4nv-b64-w2] "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    scale_rows: 512 rows on cuda:80\n"), std::string::npos) << text;
  // Its predicted cells carry no prediction object (a report made by hand): nothing underflows.
  EXPECT_NE(text.find("static pre-checks predicted 0 failing cells before compiling (! marks"),
            std::string::npos)
      << text;
  // --expand: every row, as before.
  const auto expanded = render_terminal(library_report(), TerminalStyle{false, true});
  EXPECT_NE(expanded.find("\nscale_rows[v2047-fp8e4nv-b128-w2] "), std::string::npos);
  EXPECT_GT(std::count(expanded.begin(), expanded.end(), '\n'), 2048);
}

TEST(KernelRollup, RowsAlikeShareOnlyWhatNoPassingRowHas) {
  auto r = library_report();
  std::map<std::pair<std::string, std::string>, const CellResult*> at;
  for (const auto& c : r.cells) at[{c.kernel, c.target}] = &c;
  const auto groups = failing_rows_alike(rows_by_kernel(r).front(), r.targets,
                                         [&](const std::string& row, const std::string& t) {
                                           const auto it = at.find({row, t});
                                           return it == at.end() ? nullptr : it->second;
                                         });
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups.front().rows.size(), 512u);
  // b64 and w2 appear among the failing rows but also among the passing ones: not theirs.
  EXPECT_EQ(groups.front().shared, std::vector<std::string>{"fp8e4nv"});
  EXPECT_EQ(alike_rows_name({{"k[a]"}, {}}), "k[a]");
}

TEST(MarkdownReport, RowsThatFailAlikeAreOneLineThereToo) {
  const auto md = render_markdown(library_report());
  EXPECT_LT(std::count(md.begin(), md.end(), '\n'), 60) << md;
  EXPECT_NE(md.find("| `scale_rows (2048 rows)` | `ok 1536/2048 A` | `ok 2048/2048` |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ↳ `512 rows (fp8e4nv), e.g. scale_rows[v3-fp8e4nv-b64-w2]` |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("scale_rows: 512 rows on cuda:80"), std::string::npos) << md;
}

}  // namespace
}  // namespace portcheck
