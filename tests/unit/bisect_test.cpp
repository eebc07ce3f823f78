// The bisection alone, over made-up histories: which releases it compiles, the boundary it finds,
// and that --all's walk agrees with it.
#include "src/versions/bisect.hpp"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/core/errors.hpp"

namespace portcheck {
namespace {

const std::vector<std::string> kReleases = {"3.4.0", "3.5.0", "3.5.1", "3.6.0",
                                            "3.7.0", "3.7.1", "3.8.0", "3.9.0"};

ReleaseVerdict ok() { return {}; }
ReleaseVerdict failed(const std::string& fingerprint) {
  ReleaseVerdict v;
  v.cell.status = Status::failed;
  v.cell.kind = FailureKind::frontend_error;
  v.cell.stage = "frontend";
  v.cell.fingerprint = fingerprint;
  return v;
}

// Each row's verdict per release, and a log of what was asked.
struct FakeHistory {
  std::map<std::string, std::map<std::string, ReleaseVerdict>> verdicts;
  std::vector<std::pair<std::string, std::vector<std::string>>> asked;

  VerdictsOf function() {
    return [this](const std::string& release, const std::vector<std::string>& rows) {
      asked.emplace_back(release, rows);
      std::map<std::string, ReleaseVerdict> out;
      for (const auto& row : rows) out[row] = verdicts.at(row).at(release);
      return out;
    };
  }
  void row(const std::string& name, const std::string& first_new, const ReleaseVerdict& old_verdict,
           const ReleaseVerdict& new_verdict) {
    bool changed = false;
    for (const auto& r : kReleases) {
      changed = changed || r == first_new;
      verdicts[name][r] = changed ? new_verdict : old_verdict;
    }
  }
};

TEST(Bisect, FindsTheFirstReleaseWithTheNewVerdictInLogarithmicallyManyCompiles) {
  FakeHistory history;
  history.row("blockptr", "3.9.0", ok(), failed("a"));
  history.row("poll", "3.6.0", failed("b"), ok());
  const auto found = bisect_rows(kReleases, {"blockptr", "poll"}, history.function());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].boundary, std::make_pair(std::string("3.8.0"), std::string("3.9.0")));
  EXPECT_EQ(found[1].boundary, std::make_pair(std::string("3.5.1"), std::string("3.6.0")));
  // Both ends once for both rows, then one release per round shared by the rows that need it.
  ASSERT_GE(history.asked.size(), 3u);
  EXPECT_EQ(history.asked[0].second.size(), 2u);
  EXPECT_EQ(history.asked[1].second.size(), 2u);
  EXPECT_EQ(history.asked[2].first, "3.6.0") << "the first midpoint is shared";
  EXPECT_EQ(history.asked[2].second.size(), 2u);
  EXPECT_LE(history.asked.size(), 2u + 2u * 3u);
  for (const auto& row : found) EXPECT_LE(row.known.size(), 5u) << row.row;
}

TEST(Bisect, AFingerprintChangeIsAChangeAndEqualEndsAreNone) {
  FakeHistory history;
  history.row("ptxas", "3.9.0", failed("old"), failed("new"));
  history.row("steady", "3.9.0", ok(), ok());
  const auto found = bisect_rows(kReleases, {"ptxas", "steady"}, history.function());
  EXPECT_EQ(found[0].boundary->second, "3.9.0");
  EXPECT_FALSE(found[1].boundary.has_value());
  EXPECT_EQ(found[1].known.size(), 2u)
      << "only the ends are compiled for a row that did not change";
}

TEST(Bisect, WalkAllGivesTheWholeHistoryAndAgreesWithTheSearch) {
  FakeHistory history;
  history.row("two-changes", "3.5.0", failed("import"), ok());
  history.verdicts["two-changes"]["3.9.0"] = failed("blockptr");
  const auto walked = walk_all(kReleases, {"two-changes"}, history.function());
  EXPECT_EQ(walked[0].known.size(), kReleases.size());
  EXPECT_EQ(walked[0].boundary->second, "3.5.0");
  const auto searched = bisect_rows(kReleases, {"two-changes"}, history.function());
  // Both ends differ from each other; the search finds a real change, the one after the start.
  ASSERT_TRUE(searched[0].boundary.has_value());
  const auto& [before, after] = *searched[0].boundary;
  EXPECT_NE(searched[0].known.at(before).key(), searched[0].known.at(after).key());
  EXPECT_EQ(searched[0].known.at(before).key(), searched[0].known.at("3.4.0").key());
}

TEST(Bisect, ARefusalIsAVerdict) {
  FakeHistory history;
  ReleaseVerdict refused;
  refused.refusal = "unknown option field";
  history.row("option", "3.7.0", refused, ok());
  const auto found = bisect_rows(kReleases, {"option"}, history.function());
  EXPECT_EQ(found[0].boundary->second, "3.7.0");
  EXPECT_EQ(found[0].known.at("3.4.0").summary(), "refused");
}

TEST(BisectRange, EndsMustBeOfferedAndInOrderAndPreReleasesOnlyWhenAsked) {
  const std::vector<std::string> offered = {"3.4.0", "3.5.0", "3.6.0rc1", "3.6.0", "3.7.0"};
  EXPECT_EQ(releases_between(offered, "3.4.0", "3.7.0", false),
            (std::vector<std::string>{"3.4.0", "3.5.0", "3.6.0", "3.7.0"}));
  EXPECT_EQ(releases_between(offered, "3.5.0", "3.6.0", true),
            (std::vector<std::string>{"3.5.0", "3.6.0rc1", "3.6.0"}));
  EXPECT_EQ(releases_between(offered, "3.5", "3.6.0", false),
            (std::vector<std::string>{"3.5.0", "3.6.0"}));
  try {
    releases_between(offered, "3.4.7", "3.7.0", false);
    FAIL() << "an unknown release was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--from 3.4.7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3.4.0, 3.5.0, 3.6.0, 3.7.0"), std::string::npos);
  }
  EXPECT_THROW(releases_between(offered, "3.7.0", "3.4.0", false), UsageError);
  EXPECT_THROW(releases_between(offered, "3.5.0", "3.5.0", false), UsageError);
}

}  // namespace
}  // namespace portcheck
