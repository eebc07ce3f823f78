#include "util/text_diff.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace util {
namespace {

TEST(UnifiedDiff, EqualInputsGiveNothing) {
  EXPECT_EQ(unified_diff("", "", "a", "b"), "");
  EXPECT_EQ(unified_diff("x\ny\n", "x\ny\n", "a", "b"), "");
}

std::string numbered(int from, int to, int changed = -1, const std::string& with = "") {
  std::string out;
  for (int i = from; i <= to; ++i) out += (i == changed ? with : std::to_string(i)) + "\n";
  return out;
}

TEST(UnifiedDiff, OneChangeWithContext) {
  const auto d =
      unified_diff(numbered(1, 10), numbered(1, 10, 5, "five"), "old.ttgir", "new.ttgir");
  EXPECT_EQ(d,
            "--- old.ttgir\n+++ new.ttgir\n"
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, HunksMergeOrSplitByContext) {
  // Checked against GNU diff -u. Changes at 2 and 10: 7 equal lines between them (> 2*3): two
  // hunks.
  auto b = numbered(1, 20);
  b.replace(b.find("2\n"), 2, "two\n");
  b.replace(b.find("10\n"), 3, "ten\n");
  EXPECT_EQ(unified_diff(numbered(1, 20), b, "a", "b"),
            "--- a\n+++ b\n"
            "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
            "@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n");
  // Changes at 2 and 9: 6 equal lines between them (<= 2*3): one hunk.
  b = numbered(1, 20);
  b.replace(b.find("2\n"), 2, "two\n");
  b.replace(b.find("9\n"), 2, "nine\n");
  EXPECT_EQ(unified_diff(numbered(1, 20), b, "a", "b"),
            "--- a\n+++ b\n"
            "@@ -1,12 +1,12 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n");
  // Context 0.
  EXPECT_EQ(unified_diff(numbered(1, 5), numbered(1, 5, 3, "x"), "a", "b", 0),
            "--- a\n+++ b\n@@ -3 +3 @@\n-3\n+x\n");
}

TEST(UnifiedDiff, InsertionsDeletionsAndEdges) {
  // Pure insertion: an empty old range names the line before it.
  EXPECT_EQ(unified_diff("a\nb\n", "a\nnew\nb\n", "x", "y", 0),
            "--- x\n+++ y\n@@ -1,0 +2 @@\n+new\n");
  EXPECT_EQ(unified_diff("a\nold\nb\n", "a\nb\n", "x", "y", 0),
            "--- x\n+++ y\n@@ -2 +1,0 @@\n-old\n");
  EXPECT_EQ(unified_diff("", "a\nb\n", "x", "y"), "--- x\n+++ y\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(unified_diff("a\nb\n", "", "x", "y"), "--- x\n+++ y\n@@ -1,2 +0,0 @@\n-a\n-b\n");
  EXPECT_EQ(unified_diff("a\nb", "a\nb\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

// Reads a unified diff back: the old and new texts its hunks say, for the lines they cover, must
// come out of the inputs; and the number of changed lines must be minimal (as an LCS says).
int changed_lines(const std::string& d) {
  int n = 0;
  for (std::size_t pos = 0; pos < d.size();) {
    auto end = d.find('\n', pos);
    if ((d[pos] == '-' || d[pos] == '+') && d.compare(pos, 3, "---") != 0 &&
        d.compare(pos, 3, "+++") != 0)
      ++n;
    pos = end + 1;
  }
  return n;
}

int lcs_length(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<std::vector<int>> t(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j)
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

// Applies a unified diff with full context (the whole file in one hunk) to get the new text back.
std::string new_side(const std::string& d) {
  std::string out;
  for (std::size_t pos = d.find("@@"); pos < d.size();) {
    auto end = d.find('\n', pos);
    if (d[pos] == ' ' || d[pos] == '+') out += d.substr(pos + 1, end - pos);
    pos = end + 1;
  }
  return out;
}

TEST(UnifiedDiff, MinimalOnRandomInputs) {
  std::mt19937 random(42);
  for (int round = 0; round < 300; ++round) {
    std::vector<int> a(random() % 30), b(random() % 30);
    const int alphabet = 2 + static_cast<int>(random() % 5);
    for (auto& x : a) x = static_cast<int>(random() % alphabet);
    for (auto& x : b) x = static_cast<int>(random() % alphabet);
    std::string ta, tb;
    for (int x : a) ta += std::to_string(x) + "\n";
    for (int x : b) tb += std::to_string(x) + "\n";
    const auto d = unified_diff(ta, tb, "a", "b", 1000);
    const int expected = static_cast<int>(a.size() + b.size()) - 2 * lcs_length(a, b);
    ASSERT_EQ(changed_lines(d), expected) << ta << "---\n" << tb << "---\n" << d;
    if (ta != tb) {
      ASSERT_EQ(new_side(d), tb) << d;
    }
  }
}

TEST(UnifiedDiff, FastOnLargeFiles) {
  std::string a, b;
  for (int i = 0; i < 12000; ++i) {
    a += "  %" + std::to_string(i) + " = op " + std::to_string(i % 97) + "\n";
    b += "  %" + std::to_string(i) + " = op " + std::to_string((i % 13 == 0 ? i + 1 : i) % 97) +
         "\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const auto d = unified_diff(a, b, "a", "b");
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(d.empty());
  EXPECT_LT(seconds, 2.0);
}

}  // namespace
}  // namespace util
