#include "src/report/baseline.hpp"

#include <gtest/gtest.h>

#include "src/core/errors.hpp"
#include "tests/unit/report_fixtures.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

using test_support::cell;

// A failing cell of `kind` as interpret() leaves it: a launch-limit verdict has its own status.
CellResult failing(FailureKind kind, const std::string& fingerprint) {
  auto c = cell(to_string(kind), "cuda:90", kind, fingerprint, "what failed", "stage");
  if (kind == FailureKind::launch_limit) c.status = Status::launch;
  return c;
}

Report with_every_kind(const std::string& fingerprint) {
  Report report;
  for (const auto& row : kFailureKinds)
    if (row.value != FailureKind::none) report.cells.push_back(failing(row.value, fingerprint));
  return report;
}

std::vector<BaselineEntry> written_and_read(const Report& report) {
  const util::TempDir dir("baseline-test");
  const auto file = dir.path() / "baseline.json";
  util::atomic_write_file(file, baseline_to_json(report));
  return load_baseline(file);
}

// Issue 42: a launch-limit cell recorded by --write-baseline stayed "new" under --baseline.
TEST(Baseline, EveryKindOfFailureItRecordsIsKnownNextTime) {
  const auto baseline = written_and_read(with_every_kind("aaaaaaaaaaaa"));
  ASSERT_EQ(baseline.size(), kFailureKinds.size() - 1);
  auto report = with_every_kind("aaaaaaaaaaaa");
  apply_baseline(report, baseline, "baseline.json");
  for (const auto& c : report.cells) {
    EXPECT_FALSE(c.is_new) << c.kernel;
    EXPECT_TRUE(c.in_baseline) << c.kernel;
  }
  EXPECT_TRUE(report.baseline.fixed.empty());
}

TEST(Baseline, AnotherFingerprintIsNewAndAPassingCellIsFixed) {
  const auto baseline = written_and_read(with_every_kind("aaaaaaaaaaaa"));
  auto report = with_every_kind("bbbbbbbbbbbb");
  report.cells.front() = cell(report.cells.front().kernel, "cuda:90");
  apply_baseline(report, baseline, "baseline.json");
  ASSERT_EQ(report.baseline.fixed.size(), 1U);
  EXPECT_EQ(report.baseline.fixed[0].row, report.cells.front().kernel);
  for (std::size_t i = 1; i < report.cells.size(); ++i) {
    EXPECT_TRUE(report.cells[i].is_new) << report.cells[i].kernel;
    EXPECT_FALSE(report.cells[i].in_baseline) << report.cells[i].kernel;
  }
}

TEST(Baseline, ACellListedTwiceIsRefusedNamingBothEntries) {
  const util::TempDir dir("baseline-test");
  const auto file = dir.path() / "baseline.json";
  util::atomic_write_file(
      file,
      R"({"baseline_version": 1, "failures": [{"row": "k", "target": "cuda:90"},)"
      R"( {"row": "j", "target": "cuda:90"}, {"row": "k", "target": "cuda:90", "fingerprint": "x"}]})");
  try {
    load_baseline(file);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "failures[2]: k on cuda:90 (triton current) is also failures[0]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace portcheck
