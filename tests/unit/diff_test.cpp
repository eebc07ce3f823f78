#include "src/versions/diff.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "src/core/errors.hpp"
#include "tests/unit/report_fixtures.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

using test_support::cell;
using Mode = DiffSelection::Mode;

CellResult at(CellResult c, const std::string& triton, const std::string& version) {
  c.triton = triton;
  c.triton_version = version;
  return c;
}

CellResult failing(const std::string& row, const std::string& target, const std::string& fp,
                   const std::string& message) {
  return cell(row, target, FailureKind::mlir_error, fp, message, "ttgir");
}

CellResult compiled(const std::string& row, const std::string& target, double compile_s, int cubin,
                    int registers) {
  auto c = cell(row, target);
  c.compile_s = compile_s;
  c.sizes = {{"cubin", cubin}, {"ptx", 4000}};
  c.resources = {{"registers", registers}, {"local_bytes", 0}};
  c.metadata.num_warps = 4;
  c.metadata.num_stages = 3;
  c.metadata.shared = 16384;
  return c;
}

// One report, two Tritons ("3.8.0" and "current" = 3.9.0), two targets; a cell of each category.
Report two_versions() {
  Report r;
  r.targets = {"cuda:80", "cuda:90"};
  r.rows = {"axpy", "dot_small[int8]", "gamma", "softmax", "matmul", "old_only", "new_only"};
  const auto both = [&r](const CellResult& old_cell, const CellResult& new_cell) {
    r.cells.push_back(at(old_cell, "3.8.0", "3.8.0"));
    r.cells.push_back(at(new_cell, "current", "3.9.0"));
  };
  both(cell("axpy", "cuda:80"), cell("axpy", "cuda:80"));  // unchanged
  both(cell("axpy", "cuda:90"),
       failing("axpy", "cuda:90", "aaaaaaaaaaaa", "'tt.dot' op bad layout"));  // regressed
  both(failing("dot_small[int8]", "cuda:80", "bbbbbbbbbbbb", "'arith.extf' op operand #0"),
       cell("dot_small[int8]", "cuda:80"));  // fixed
  both(failing("gamma", "cuda:80", "cccccccccccc", "old message"),
       failing("gamma", "cuda:80", "dddddddddddd", "new message"));  // fail differently
  both(failing("gamma", "cuda:90", "cccccccccccc", "same"),
       failing("gamma", "cuda:90", "cccccccccccc", "same"));  // unchanged (same failure)
  both(compiled("matmul", "cuda:90", 1.0, 10000, 64),
       compiled("matmul", "cuda:90", 2.0, 12000, 96));  // slower, changed
  r.cells.push_back(at(cell("old_only", "cuda:80"), "3.8.0", "3.8.0"));
  r.cells.push_back(at(cell("new_only", "cuda:80"), "current", "3.9.0"));
  return r;
}

std::vector<std::string> rows_of(const std::vector<CellChange>& list) {
  std::vector<std::string> out;
  for (const auto& c : list) out.push_back(c.row);
  return out;
}

using Rows = std::vector<std::string>;

TEST(DiffVersions, EveryCategory) {
  const auto r = two_versions();
  const auto d = diff_reports(r, r, {Mode::versions, "3.8.0", "current"}, {});
  EXPECT_EQ(d.compared, 6);
  EXPECT_EQ(rows_of(d.regressed), Rows{"axpy"});
  EXPECT_EQ(d.regressed[0].new_cell->target, "cuda:90");
  EXPECT_EQ(rows_of(d.fixed), Rows{"dot_small[int8]"});
  EXPECT_EQ(rows_of(d.fail_differently), Rows{"gamma"});
  EXPECT_EQ(d.unchanged, 3);  // axpy cuda:80, gamma cuda:90, matmul
  EXPECT_EQ(rows_of(d.slower), Rows{"matmul"});
  EXPECT_EQ(rows_of(d.changed), Rows{"matmul"});
  EXPECT_EQ(rows_of(d.only_in_old), Rows{"old_only"});
  EXPECT_EQ(rows_of(d.only_in_new), Rows{"new_only"});
}

TEST(DiffVersions, LabelMatchesVersionWhenNoCellHasIt) {
  const auto r = two_versions();
  const auto d = diff_reports(r, r, {Mode::versions, "3.8.0", "3.9.0"}, {});
  EXPECT_EQ(d.compared, 6);
  EXPECT_EQ(d.regressed.size(), 1u);
}

TEST(DiffVersions, UnknownLabelOrSameLabelIsAUsageError) {
  const auto r = two_versions();
  EXPECT_THROW(diff_reports(r, r, {Mode::versions, "3.7.0", "current"}, {}), UsageError);
  EXPECT_THROW(diff_reports(r, r, {Mode::versions, "current", "current"}, {}), UsageError);
}

TEST(DiffTargets, EveryCategory) {
  Report r;
  r.targets = {"cuda:90", "hip:gfx942"};
  r.cells = {
      cell("axpy", "cuda:90"),
      cell("axpy", "hip:gfx942"),
      cell("gamma", "cuda:90"),
      failing("gamma", "hip:gfx942", "aaaaaaaaaaaa", "no tgamma"),
      failing("dot", "cuda:90", "bbbbbbbbbbbb", "ptxas says no"),
      cell("dot", "hip:gfx942"),
      failing("fp8", "cuda:90", "cccccccccccc", "one"),
      failing("fp8", "hip:gfx942", "dddddddddddd", "two"),
      cell("cuda_only", "cuda:90"),
  };
  const auto d = diff_reports(r, r, {Mode::targets, "cuda:90", "hip:gfx942"}, {});
  EXPECT_EQ(d.compared, 4);
  EXPECT_EQ(rows_of(d.regressed), Rows{"gamma"});
  EXPECT_EQ(rows_of(d.fixed), Rows{"dot"});
  EXPECT_EQ(rows_of(d.fail_differently), Rows{"fp8"});
  EXPECT_EQ(d.unchanged, 1);
  EXPECT_EQ(rows_of(d.only_in_old), Rows{"cuda_only"});
  EXPECT_TRUE(d.only_in_new.empty());
  EXPECT_THROW(diff_reports(r, r, {Mode::targets, "cuda:90", "cuda:100"}, {}), UsageError);

  const auto text = render_diff(d, false);
  EXPECT_NE(text.find("cuda:90 -> hip:gfx942 on 4 cells"), std::string::npos) << text;
  EXPECT_NE(text.find("  gamma: ok -> mlir-error in ttgir\n      no tgamma\n"), std::string::npos)
      << text;
}

TEST(DiffRuns, MatchesRowTargetAndTriton) {
  Report before, after;
  before.cells = {cell("axpy", "cuda:90"), failing("dot", "cuda:90", "aaaaaaaaaaaa", "x"),
                  failing("fp8", "cuda:90", "bbbbbbbbbbbb", "y"), cell("gone", "cuda:90"),
                  at(cell("axpy", "cuda:90"), "3.8.0", "3.8.0")};
  after.cells = {failing("axpy", "cuda:90", "cccccccccccc", "z"), cell("dot", "cuda:90"),
                 failing("fp8", "cuda:90", "dddddddddddd", "w"), cell("axpy", "cuda:80"),
                 at(cell("axpy", "cuda:90"), "3.8.0", "3.8.0")};
  const auto d = diff_reports(before, after, {Mode::runs, "old.json", "new.json"}, {});
  EXPECT_EQ(d.compared, 4);
  EXPECT_EQ(rows_of(d.regressed), Rows{"axpy"});
  EXPECT_EQ(d.regressed[0].old_cell->triton, "current");
  EXPECT_EQ(rows_of(d.fixed), Rows{"dot"});
  EXPECT_EQ(rows_of(d.fail_differently), Rows{"fp8"});
  EXPECT_EQ(d.unchanged, 1);
  EXPECT_EQ(rows_of(d.only_in_old), Rows{"gone"});
  EXPECT_EQ(rows_of(d.only_in_new), Rows{"axpy"});
  EXPECT_EQ(d.only_in_new[0].new_cell->target, "cuda:80");

  const auto text = render_diff(d, false);
  EXPECT_NE(text.find("old.json -> new.json on 4 cells"), std::string::npos) << text;
  // Two Triton labels in play: the cells name theirs.
  EXPECT_NE(text.find("axpy on cuda:90 (triton current): ok -> mlir-error"), std::string::npos)
      << text;
}

// Issue 28: a run under `--triton 3.8.0` against a plain run paired nothing ("on 0 cells", every
// cell "only in" one side) and --fail-on regressed passed.
TEST(DiffRuns, RunsOfDifferentLabelsPairByVersionOrAcrossTheirOneRelease) {
  Report before, after;
  before.cells = {at(cell("axpy", "cuda:90"), "3.8.0", "3.8.0"),
                  at(cell("dot", "cuda:90"), "3.8.0", "3.8.0")};
  after.cells = {at(failing("axpy", "cuda:90", "cccccccccccc", "z"), "current", "3.9.0"),
                 at(cell("dot", "cuda:90"), "current", "3.9.0")};
  auto d = diff_reports(before, after, {Mode::runs, "old.json", "new.json"}, {});
  EXPECT_EQ(d.compared, 2);
  EXPECT_EQ(rows_of(d.regressed), Rows{"axpy"});
  EXPECT_EQ(diff_exit_code(d, {"regressed"}), 1);
  EXPECT_NE(render_diff(d, false).find("compared across Triton releases: 3.8.0 -> 3.9.0"),
            std::string::npos);

  after.cells[0] = at(failing("axpy", "cuda:90", "cccccccccccc", "z"), "current", "3.8.0");
  after.cells[1] = at(cell("dot", "cuda:90"), "current", "3.8.0");
  d = diff_reports(before, after, {Mode::runs, "old.json", "new.json"}, {});
  EXPECT_EQ(d.compared, 2);
  EXPECT_EQ(d.pairing_note, "paired by Triton version: the runs' labels differ");

  // Several releases on each side and none in common: nothing can pair, and it says why.
  before.cells.push_back(at(cell("axpy", "cuda:90"), "3.7.0", "3.7.0"));
  after.cells = {at(cell("axpy", "cuda:90"), "current", "3.9.0"),
                 at(cell("axpy", "cuda:90"), "3.5.0", "3.5.0")};
  try {
    diff_reports(before, after, {Mode::runs, "old.json", "new.json"}, {});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("old.json and new.json share no Triton release (old.json "
                                         "holds 3.7.0, 3.8.0; new.json holds 3.5.0, 3.9.0)"),
              std::string::npos)
        << e.what();
  }
}

// Issue 42: two plain runs are both "current"; made with different releases, nothing said so.
TEST(DiffRuns, RunsSharingALabelButNotARelease) {
  Report before, after;
  before.cells = {at(cell("axpy", "cuda:90"), "current", "3.8.0")};
  after.cells = {at(failing("axpy", "cuda:90", "cccccccccccc", "z"), "current", "3.9.0")};
  auto d = diff_reports(before, after, {Mode::runs, "old.json", "new.json"}, {});
  EXPECT_EQ(d.compared, 1);
  EXPECT_EQ(rows_of(d.regressed), Rows{"axpy"});
  const std::string note =
      "triton 'current' is 3.8.0 in old.json but 3.9.0 in new.json: a change may be the release's";
  EXPECT_EQ(d.pairing_note, note);
  EXPECT_NE(render_diff(d, false).find(note), std::string::npos);

  after.cells = {at(cell("axpy", "cuda:90"), "current", "3.8.0")};
  d = diff_reports(before, after, {Mode::runs, "old.json", "new.json"}, {});
  EXPECT_EQ(d.pairing_note, "");  // the same release: nothing to say
}

TEST(DiffRuns, XfailAndXpassCountAsFailingAndPassing) {
  Report before, after;
  auto xfail = failing("dot", "cuda:90", "aaaaaaaaaaaa", "x");
  xfail.status = Status::xfail;
  auto xpass = cell("dot", "cuda:90");
  xpass.status = Status::xpass;
  auto launch = cell("big", "cuda:90", FailureKind::launch_limit, "eeeeeeeeeeee", "too big");
  launch.status = Status::launch;
  auto unchecked = cell("static", "cuda:90");
  unchecked.status = Status::unchecked;
  before.cells = {xfail, cell("big", "cuda:90"), unchecked};
  after.cells = {xpass, launch, cell("static", "cuda:90")};
  const auto d = diff_reports(before, after, {Mode::runs, "a", "b"}, {});
  EXPECT_EQ(rows_of(d.fixed), Rows{"dot"});
  EXPECT_EQ(rows_of(d.regressed), Rows{"big"});
  EXPECT_EQ(rows_of(d.not_compared), Rows{"static"});
  EXPECT_EQ(d.unchanged, 0);
}

Report pair(const CellResult& before, const CellResult& after) {
  Report r;
  r.cells = {at(before, "3.8.0", "3.8.0"), at(after, "3.9.0", "3.9.0")};
  return r;
}

DiffResult diff_pair(const CellResult& before, const CellResult& after,
                     const DiffOptions& options = {}) {
  const auto r = pair(before, after);
  return diff_reports(r, r, {Mode::versions, "3.8.0", "3.9.0"}, options);
}

TEST(DiffThresholds, SlowerNeedsBothRatioAndMinimumSeconds) {
  // 2x but only 0.2 s more: not slower.
  EXPECT_TRUE(diff_pair(compiled("k", "cuda:90", 0.2, 1, 1), compiled("k", "cuda:90", 0.4, 1, 1))
                  .slower.empty());
  // 0.6 s more but only 1.2x: not slower.
  EXPECT_TRUE(diff_pair(compiled("k", "cuda:90", 3.0, 1, 1), compiled("k", "cuda:90", 3.6, 1, 1))
                  .slower.empty());
  // 1.5x and 0.5 s more, exactly at both thresholds: slower.
  EXPECT_EQ(diff_pair(compiled("k", "cuda:90", 1.0, 1, 1), compiled("k", "cuda:90", 1.5, 1, 1))
                .slower.size(),
            1u);
  // Custom thresholds.
  DiffOptions strict;
  strict.time_ratio = 1.1;
  strict.time_min_seconds = 0.1;
  EXPECT_EQ(
      diff_pair(compiled("k", "cuda:90", 3.0, 1, 1), compiled("k", "cuda:90", 3.6, 1, 1), strict)
          .slower.size(),
      1u);
  // Faster is never slower; failures are not timed.
  EXPECT_TRUE(diff_pair(compiled("k", "cuda:90", 3.0, 1, 1), compiled("k", "cuda:90", 1.0, 1, 1))
                  .slower.empty());
}

TEST(DiffThresholds, SizeChangesAtLeastTheThresholdRegistersAnyChange) {
  // cubin +4%: below 5%; registers 64 -> 96: a register change, in its own list.
  auto d =
      diff_pair(compiled("k", "cuda:90", 1, 10000, 64), compiled("k", "cuda:90", 1, 10400, 96));
  EXPECT_TRUE(d.changed.empty());
  ASSERT_EQ(d.registers.size(), 1u);
  ASSERT_EQ(d.registers[0].metrics.size(), 1u);
  const auto& m = d.registers[0].metrics[0];
  EXPECT_EQ(m.metric, "resources.registers");
  EXPECT_EQ(m.old_value, 64);
  EXPECT_EQ(m.new_value, 96);
  ASSERT_TRUE(m.percent);
  EXPECT_DOUBLE_EQ(*m.percent, 50.0);

  // Issue 42: one register more (+1.6%) is below any size threshold, and shown all the same.
  d = diff_pair(compiled("k", "cuda:90", 1, 10000, 64), compiled("k", "cuda:90", 1, 10000, 65));
  ASSERT_EQ(d.registers.size(), 1u);
  EXPECT_NE(render_diff(d, false).find("register and spill changes\n  k on cuda:90: registers 64 "
                                       "-> 65 (+1)\n"),
            std::string::npos)
      << render_diff(d, false);

  // Shrinking counts too; exactly 5% counts.
  d = diff_pair(compiled("k", "cuda:90", 1, 10000, 64), compiled("k", "cuda:90", 1, 9500, 64));
  ASSERT_EQ(d.changed.size(), 1u);
  EXPECT_EQ(d.changed[0].metrics[0].metric, "sizes.cubin");
  EXPECT_DOUBLE_EQ(*d.changed[0].metrics[0].percent, -5.0);

  // A larger threshold hides it.
  DiffOptions loose;
  loose.size_threshold = 0.10;
  EXPECT_TRUE(diff_pair(compiled("k", "cuda:90", 1, 10000, 64),
                        compiled("k", "cuda:90", 1, 9500, 64), loose)
                  .changed.empty());

  // Spills from nothing: no percentage; shared and num_stages are compared too.
  auto before = compiled("k", "cuda:90", 1, 10000, 64);
  auto after = before;
  after.resources["local_bytes"] = 128;
  after.metadata.num_stages = 4;
  after.metadata.shared = 32768;
  d = diff_pair(before, after);
  ASSERT_EQ(d.changed.size(), 1u);
  ASSERT_EQ(d.registers.size(), 1u);
  std::vector<std::string> metrics;
  for (const auto& x : d.changed[0].metrics) metrics.push_back(x.metric);
  EXPECT_EQ(metrics, (Rows{"metadata.shared", "metadata.num_stages"}));
  EXPECT_EQ(d.registers[0].metrics[0].metric, "resources.local_bytes");
  EXPECT_FALSE(d.registers[0].metrics[0].percent);

  const auto text = render_diff(d, false);
  EXPECT_NE(text.find("register and spill changes\n  k on cuda:90: spills 0 B -> 128 B (+128 B)\n\n"
                      "size and metadata changes (5% or more)\n  k on cuda:90: shared 16.0 KiB -> "
                      "32.0 KiB (+100.0%) · num_stages 3 -> 4 (+33.3%)"),
            std::string::npos)
      << text;
}

TEST(DiffRender, HeaderCountsAndSections) {
  const auto r = two_versions();
  const auto d = diff_reports(r, r, {Mode::versions, "3.8.0", "current"}, {});
  const auto text = render_diff(d, false);
  EXPECT_TRUE(
      text.starts_with("triton 3.8.0 -> current on 6 cells\n"
                       "regressed 1 · fixed 1 · fail differently 1 · unchanged 3 · slower "
                       "to compile 1\n"))
      << text;
  EXPECT_NE(text.find("regressed\n  axpy on cuda:90: ok -> mlir-error in ttgir\n"
                      "      'tt.dot' op bad layout\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fixed\n  dot_small[int8] on cuda:80: mlir-error in ttgir -> ok\n"
                      "      was: 'arith.extf' op operand #0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      old: old message\n      new: new message\n"), std::string::npos);
  EXPECT_NE(
      text.find("register and spill changes\n  matmul on cuda:90: registers 64 -> 96 (+32)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("size and metadata changes (5% or more)\n  matmul on cuda:90: cubin 9.8 KiB "
                      "-> 11.7 KiB (+20.0%)\n"),
            std::string::npos)
      << text;
  // What the passing pairs took to compile, in all: "slower to compile" of the whole.
  EXPECT_NE(text.find("compile time "), std::string::npos) << text;
  EXPECT_NE(text.find("slower to compile (1.5x and 0.5 s or more)\n"
                      "  matmul on cuda:90: 1.00 s -> 2.00 s (2.0x)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("only in triton 3.8.0\n  old_only on cuda:80: ok\n"), std::string::npos);
  EXPECT_EQ(text.find('\033'), std::string::npos);
  EXPECT_NE(render_diff(d, true).find("\033[31mregressed 1\033[0m"), std::string::npos);
}

TEST(DiffRender, EndsSayingWhatAPassingCellProves) {
  const auto r = two_versions();
  const auto text =
      render_diff(diff_reports(r, r, {Mode::versions, "3.8.0", "current"}, {}), false);
  EXPECT_TRUE(text.ends_with("\n\n" + std::string(kCompileOnlyDisclaimer) + "\n")) << text;
}

// What diff_to_json's test asserted, on the DiffResult that `diff` prints and exits by
// (diff_to_json was never wired to a command and is gone).
TEST(DiffVersions, CountsAndCells) {
  const auto r = two_versions();
  const auto d = diff_reports(r, r, {Mode::versions, "3.8.0", "current"}, {});
  EXPECT_EQ(d.selection.mode, Mode::versions);
  EXPECT_EQ(d.regressed.size(), 1U);
  EXPECT_EQ(d.unchanged, 3);
  EXPECT_EQ(d.compared, 6);
  EXPECT_EQ(d.regressed[0].row, "axpy");
  EXPECT_EQ(d.regressed[0].old_cell->status, Status::ok);
  EXPECT_EQ(d.regressed[0].new_cell->kind, FailureKind::mlir_error);
  EXPECT_EQ(d.regressed[0].new_cell->message, "'tt.dot' op bad layout");
  EXPECT_DOUBLE_EQ(d.slower[0].new_cell->compile_s / d.slower[0].old_cell->compile_s, 2.0);
  EXPECT_EQ(d.changed[0].metrics[0].metric, "sizes.cubin");
  EXPECT_FALSE(d.only_in_old[0].new_cell);
}

TEST(DiffFailOn, ExitCodesAndValidation) {
  const auto r = two_versions();
  const auto d = diff_reports(r, r, {Mode::versions, "3.8.0", "current"}, {});
  EXPECT_EQ(diff_exit_code(d, {}), 0);
  EXPECT_EQ(diff_exit_code(d, {"regressed"}), 1);
  EXPECT_EQ(diff_exit_code(d, {"slower,changed"}), 1);
  EXPECT_EQ(diff_exit_code(d, {"registers"}), 1);
  EXPECT_EQ(diff_exit_code(d, {"fail-differently"}), 1);
  EXPECT_THROW(diff_exit_code(d, {"regressed,bogus"}), UsageError);
  EXPECT_THROW(diff_exit_code(d, {"fail_differently"}), UsageError);

  Report same;
  same.cells = {cell("axpy", "cuda:90")};
  const auto quiet = diff_reports(same, same, {Mode::runs, "a", "b"}, {});
  EXPECT_EQ(diff_exit_code(quiet, {"regressed", "slower", "changed", "fail-differently"}), 0);
  EXPECT_THROW(diff_exit_code(quiet, {"nope"}), UsageError);  // validated even when clean
}

// ---- IR -----------------------------------------------------------------------------------------

TEST(DiffIr, FilesOfSaveIrAreFoundAndDiffed) {
  util::TempDir dir("portcheck-diff-test");
  const auto root = dir.path();
  // A variant's folder carries a hash of the row's name (cell_folders.hpp), so compute it.
  const auto row_folder = ir_row_folder("dot_small[int8]");
  EXPECT_TRUE(row_folder.starts_with("dot_small-int8~")) << row_folder;
  EXPECT_EQ(ir_target_folder("cuda:90"), "cuda_90");
  const auto write = [&](const std::string& label, const std::string& file,
                         const std::string& text) {
    const auto folder = root / label / row_folder / "cuda_90";
    std::filesystem::create_directories(folder);
    util::atomic_write_file(folder / file, text);
  };
  write("3.8.0", "dot_kernel.ttgir", "%1 = a\n%2 = b loc(#loc3)\n");
  write("3.9.0", "dot_kernel.ttgir", "%4 = a\n%5 = c loc(#loc7)\n");
  write("3.8.0", "dot_kernel.llir", "same\n");
  write("3.9.0", "dot_kernel.llir", "same\n");

  auto before = at(cell("dot_small[int8]", "cuda:90"), "3.8.0", "3.8.0");
  before.metadata.name = "dot_kernel";
  auto after = at(cell("dot_small[int8]", "cuda:90"), "3.9.0", "3.9.0");  // no name: found by scan
  ASSERT_TRUE(ir_file(root, before, "ttgir"));
  ASSERT_TRUE(ir_file(root, after, "ttgir"));
  EXPECT_FALSE(ir_file(root, after, "ptx"));

  const CellChange change{"dot_small[int8]", before, after, {}};
  EXPECT_EQ(diff_cell_ir(change, root, root),
            "--- 3.8.0/" + row_folder + "/cuda_90/dot_kernel.ttgir\n" + "+++ 3.9.0/" + row_folder +
                "/cuda_90/dot_kernel.ttgir\n"
                "@@ -1,2 +1,2 @@\n %N = a\n-%N = b\n+%N = c\n");
  // As `diff --ir ttgir` prints it: one stage, the files named by their paths.
  EXPECT_EQ(diff_cell_ir(change, root, root, {{"ttgir"}, true}),
            "--- " + (root / "3.8.0" / row_folder / "cuda_90/dot_kernel.ttgir").string() + "\n" +
                "+++ " + (root / "3.9.0" / row_folder / "cuda_90/dot_kernel.ttgir").string() +
                "\n@@ -1,2 +1,2 @@\n %N = a\n-%N = b\n+%N = c\n");
  EXPECT_EQ(diff_cell_ir(change, root, root, {{"llir", "ptx"}, true}), "");  // same, and none
  EXPECT_EQ(diff_cell_ir({"dot_small[int8]", before, std::nullopt, {}}, root, root), "");

  Report report;
  EXPECT_FALSE(saved_ir_dir(report));
  report.environment = {{"options", {{"save_ir", root.string()}}}};
  EXPECT_EQ(saved_ir_dir(report), root);
}

}  // namespace
}  // namespace portcheck
