// check/autotuned_launches: the configs of an autotuned launch judged as Triton's autotuner runs
// them, on made-up cells (the real compiler's verdicts are tests/integration/test_autotune.py's).
#include "src/check/autotuned_launches.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace portcheck {
namespace {

KernelRow config_row(const std::string& variant, std::vector<std::string> launches) {
  KernelRow row;
  row.kernel = "matmul";
  row.variant = variant;
  row.autotune = std::move(launches);
  return row;
}

// A cell of `row` on `target`: "ok", "skips" (fails with what the autotuner skips) or "raises".
CellResult cell(const KernelRow& row, const std::string& target, const std::string& how,
                const std::string& triton = "current") {
  CellResult c;
  c.kernel = row.display_name();
  c.base_kernel = row.kernel;
  c.variant = row.variant;
  c.target = target;
  c.triton = triton;
  if (how != "ok") {
    c.status = Status::launch;
    c.kind = FailureKind::launch_limit;
    c.is_new = true;
    c.autotuner_skips = how == "skips";
    c.autotuner_raises = how == "skips" ? "OutOfResources" : "RuntimeError";
  }
  return c;
}

std::map<std::string, Status> statuses(const std::vector<CellResult>& cells) {
  std::map<std::string, Status> out;
  for (const auto& c : cells) out[c.kernel + " " + c.target + " " + c.triton] = c.status;
  return out;
}

TEST(AutotunedLaunches, AConfigTheAutotunerSkipsIsSkippedWhileAnotherRemains) {
  Manifest manifest;
  manifest.rows = {config_row("small", {"l1"}), config_row("big", {"l1"})};
  std::vector<CellResult> cells = {
      cell(manifest.rows[0], "hip:gfx942", "ok"), cell(manifest.rows[1], "hip:gfx942", "skips"),
      cell(manifest.rows[0], "cuda:90", "skips"), cell(manifest.rows[1], "cuda:90", "skips")};
  judge_autotuned_launches(manifest, cells);
  EXPECT_EQ(cells[1].status, Status::skipped);
  EXPECT_FALSE(cells[1].is_new);
  ASSERT_TRUE(cells[1].autotuned);
  EXPECT_EQ(std::tie(cells[1].autotuned->name, cells[1].autotuned->configs,
                     cells[1].autotuned->remaining),
            std::make_tuple(std::string("l1"), 2, 1));
  EXPECT_NE(autotuner_note(cells[1]).find("1 of 2 configs of launch l1 remain on hip:gfx942"),
            std::string::npos);
  // On cuda:90 nothing is left: the launch fails, each config stays red, and says why.
  EXPECT_EQ(cells[2].status, Status::launch);
  EXPECT_EQ(cells[3].status, Status::launch);
  EXPECT_TRUE(cells[3].is_new);
  EXPECT_NE(autotuner_note(cells[3]).find("no config of launch l1 is left on cuda:90"),
            std::string::npos);
}

TEST(AutotunedLaunches, AConfigThatRaisesStaysRedAndTheOthersAreStillSkipped) {
  Manifest manifest;
  manifest.rows = {config_row("a", {"l1"}), config_row("b", {"l1"})};
  std::vector<CellResult> cells = {cell(manifest.rows[0], "cuda:80", "raises"),
                                   cell(manifest.rows[1], "cuda:80", "skips")};
  judge_autotuned_launches(manifest, cells);
  EXPECT_EQ(cells[0].status, Status::launch);
  EXPECT_TRUE(cells[0].is_new);
  EXPECT_EQ(cells[1].status, Status::skipped);
}

TEST(AutotunedLaunches, ARowOfTwoLaunchesIsSkippedOnlyWhereEachKeepsAnotherConfig) {
  Manifest manifest;
  manifest.rows = {config_row("shared", {"l1", "l2"}), config_row("l1-only", {"l1"}),
                   config_row("l2-only", {"l2"})};
  std::vector<CellResult> cells = {cell(manifest.rows[0], "cuda:90", "skips"),
                                   cell(manifest.rows[1], "cuda:90", "ok"),
                                   cell(manifest.rows[2], "cuda:90", "skips")};
  judge_autotuned_launches(manifest, cells);
  EXPECT_EQ(cells[0].status, Status::launch);  // launch l2 has nothing left
  EXPECT_EQ(cells[2].status, Status::launch);
  ASSERT_TRUE(cells[0].autotuned);
  EXPECT_EQ(cells[0].autotuned->name, "l2");  // the launch it decides worst
}

TEST(AutotunedLaunches, EachTargetAndTritonIsItsOwnLaunchAndPlainRowsAreUntouched) {
  Manifest manifest;
  manifest.rows = {config_row("a", {"l1"}), config_row("b", {"l1"}), config_row("plain", {})};
  std::vector<CellResult> cells = {cell(manifest.rows[0], "cuda:90", "ok", "3.8.0"),
                                   cell(manifest.rows[1], "cuda:90", "skips", "3.8.0"),
                                   cell(manifest.rows[0], "cuda:90", "skips"),
                                   cell(manifest.rows[1], "cuda:90", "skips"),
                                   cell(manifest.rows[2], "cuda:90", "skips")};
  judge_autotuned_launches(manifest, cells);
  EXPECT_EQ(statuses(cells),
            (std::map<std::string, Status>{{"matmul[a] cuda:90 3.8.0", Status::ok},
                                           {"matmul[b] cuda:90 3.8.0", Status::skipped},
                                           {"matmul[a] cuda:90 current", Status::launch},
                                           {"matmul[b] cuda:90 current", Status::launch},
                                           {"matmul[plain] cuda:90 current", Status::launch}}));
  EXPECT_FALSE(cells[4].autotuned);
}

TEST(AutotunedLaunches, LaunchesOfOneNameInTwoKernelsAreTwoLaunches) {
  Manifest manifest;
  manifest.rows = {config_row("a", {"l1"}), config_row("b", {"l1"})};
  manifest.rows[1].kernel = "other";
  std::vector<CellResult> cells = {cell(manifest.rows[0], "cuda:90", "ok"),
                                   cell(manifest.rows[1], "cuda:90", "skips")};
  judge_autotuned_launches(manifest, cells);
  EXPECT_EQ(cells[1].status, Status::launch);  // alone in its launch: nothing else remains
}

TEST(AutotunedLaunches, CompanionsAreTheRowsOneLaunchJoinsTransitively) {
  Manifest manifest;
  manifest.rows = {config_row("a", {"l1"}), config_row("plain", {}), config_row("b", {"l1", "l2"}),
                   config_row("c", {"l2"})};
  EXPECT_EQ(autotune_companions(manifest), (std::vector<std::size_t>{0, 1, 0, 0}));
}

}  // namespace
}  // namespace portcheck
