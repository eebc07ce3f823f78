#include "util/text_diff.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace util {
namespace {

struct Text {
  std::vector<std::string_view> lines;
  bool last_newline = true;  // whether the last line ends with '\n'
};

Text split_text(std::string_view s) {
  Text t;
  std::size_t pos = 0;
  while (pos < s.size()) {
    auto end = s.find('\n', pos);
    if (end == std::string_view::npos) {
      t.lines.push_back(s.substr(pos));
      t.last_newline = false;
      break;
    }
    t.lines.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return t;
}

// Myers' O(ND) difference in linear space (the bisection of diff-match-patch), on line ids.
// Marks the lines of the longest common subsequence it finds.
class LineDiff {
 public:
  LineDiff(const std::vector<int>& a, const std::vector<int>& b)
      : a_(a), b_(b), a_kept_(a.size(), 0), b_kept_(b.size(), 0) {
    run(0, static_cast<int>(a.size()), 0, static_cast<int>(b.size()));
  }
  [[nodiscard]] const std::vector<char>& a_kept() const { return a_kept_; }
  [[nodiscard]] const std::vector<char>& b_kept() const { return b_kept_; }

 private:
  void run(int a0, int a1, int b0, int b1) {
    while (a0 < a1 && b0 < b1 && a_[a0] == b_[b0]) keep(a0++, b0++);
    while (a0 < a1 && b0 < b1 && a_[a1 - 1] == b_[b1 - 1]) keep(--a1, --b1);
    if (a0 == a1 || b0 == b1) return;
    const auto split = bisect(a0, a1, b0, b1);
    if (!split) return;  // nothing in common
    run(a0, split->first, b0, split->second);
    run(split->first, a1, split->second, b1);
  }

  void keep(int i, int j) {
    a_kept_[i] = 1;
    b_kept_[j] = 1;
  }

  std::optional<std::pair<int, int>> bisect(int a0, int a1, int b0, int b1) {
    const int n = a1 - a0, m = b1 - b0;
    const int max_d = (n + m + 1) / 2;
    const int offset = max_d + 1;
    const auto length = 2 * static_cast<std::size_t>(max_d) + 3;
    v1_.assign(length, -1);
    v2_.assign(length, -1);
    v1_[offset + 1] = 0;
    v2_[offset + 1] = 0;
    const int delta = n - m;
    const bool front = (delta % 2) != 0;
    int k1start = 0, k1end = 0, k2start = 0, k2end = 0;
    for (int d = 0; d < max_d; ++d) {
      for (int k1 = -d + k1start; k1 <= d - k1end; k1 += 2) {
        const int i1 = offset + k1;
        int x1 =
            (k1 == -d || (k1 != d && v1_[i1 - 1] < v1_[i1 + 1])) ? v1_[i1 + 1] : v1_[i1 - 1] + 1;
        int y1 = x1 - k1;
        while (x1 < n && y1 < m && a_[a0 + x1] == b_[b0 + y1]) ++x1, ++y1;
        v1_[i1] = x1;
        if (x1 > n) {
          k1end += 2;
        } else if (y1 > m) {
          k1start += 2;
        } else if (front) {
          const int i2 = offset + delta - k1;
          if (i2 >= 0 && i2 < static_cast<int>(length) && v2_[i2] != -1 && x1 >= n - v2_[i2])
            return std::pair{a0 + x1, b0 + y1};
        }
      }
      for (int k2 = -d + k2start; k2 <= d - k2end; k2 += 2) {
        const int i2 = offset + k2;
        int x2 =
            (k2 == -d || (k2 != d && v2_[i2 - 1] < v2_[i2 + 1])) ? v2_[i2 + 1] : v2_[i2 - 1] + 1;
        int y2 = x2 - k2;
        while (x2 < n && y2 < m && a_[a1 - 1 - x2] == b_[b1 - 1 - y2]) ++x2, ++y2;
        v2_[i2] = x2;
        if (x2 > n) {
          k2end += 2;
        } else if (y2 > m) {
          k2start += 2;
        } else if (!front) {
          const int i1 = offset + delta - k2;
          if (i1 >= 0 && i1 < static_cast<int>(length) && v1_[i1] != -1) {
            const int x1 = v1_[i1];
            const int y1 = offset + x1 - i1;
            if (x1 >= n - x2) return std::pair{a0 + x1, b0 + y1};
          }
        }
      }
    }
    return std::nullopt;
  }

  const std::vector<int>& a_;
  const std::vector<int>& b_;
  std::vector<char> a_kept_, b_kept_;
  std::vector<int> v1_, v2_;
};

// Equal lines get equal ids across both texts; the last line without a newline differs from the
// same text with one.
class LineIds {
 public:
  std::vector<int> of(const Text& t) {
    std::vector<int> out;
    out.reserve(t.lines.size());
    for (std::size_t i = 0; i < t.lines.size(); ++i) {
      const int id = ids_.emplace(t.lines[i], static_cast<int>(ids_.size())).first->second;
      const bool unterminated = i + 1 == t.lines.size() && !t.last_newline;
      out.push_back(id * 2 + (unterminated ? 1 : 0));
    }
    return out;
  }

 private:
  std::unordered_map<std::string_view, int> ids_;
};

struct Op {
  char type;  // ' ', '-', '+'
  int a;      // old lines before this one
  int b;      // new lines before this one
};

// The edit script: every line of both texts in order, deletions before insertions.
std::vector<Op> edit_script(const std::vector<char>& a_kept, const std::vector<char>& b_kept) {
  std::vector<Op> ops;
  ops.reserve(a_kept.size() + b_kept.size());
  for (int i = 0, j = 0, n = static_cast<int>(a_kept.size()), m = static_cast<int>(b_kept.size());
       i < n || j < m;) {
    if (i < n && !a_kept[i]) {
      ops.push_back({'-', i, j});
      ++i;
    } else if (j < m && !b_kept[j]) {
      ops.push_back({'+', i, j});
      ++j;
    } else {
      ops.push_back({' ', i, j});
      ++i, ++j;
    }
  }
  return ops;
}

std::string hunk_range(int before, int count) {
  const int start = count == 0 ? before : before + 1;
  return count == 1 ? fmt::format("{}", start) : fmt::format("{},{}", start, count);
}

// Writes the hunks of an edit script.
class HunkWriter {
 public:
  HunkWriter(const Text& a, const Text& b, const std::vector<Op>& ops, int context)
      : a_(a), b_(b), ops_(ops), context_(context) {}

  // The hunks alone, without the "---"/"+++" header; empty when no line changed.
  [[nodiscard]] std::string hunks() const {
    std::string out;
    const auto total = static_cast<std::ptrdiff_t>(ops_.size());
    std::ptrdiff_t i = 0;
    while (i < total) {
      std::ptrdiff_t c = i;
      while (c < total && ops_[c].type == ' ') ++c;
      if (c == total) break;
      const std::ptrdiff_t start = std::max(i, c - context_);
      const std::ptrdiff_t end = hunk_end(c);
      out += hunk(start, end);
      i = end;
    }
    return out;
  }

 private:
  // One past the hunk's last line, for the hunk whose first change is at `first_change`: changes
  // with at most 2 * context equal lines between them share a hunk.
  [[nodiscard]] std::ptrdiff_t hunk_end(std::ptrdiff_t first_change) const {
    const auto total = static_cast<std::ptrdiff_t>(ops_.size());
    std::ptrdiff_t last = first_change;
    for (std::ptrdiff_t k = first_change + 1; k < total; ++k) {
      if (ops_[k].type != ' ')
        last = k;
      else if (k - last > 2 * context_)
        break;
    }
    return std::min(total, last + context_ + 1);
  }

  [[nodiscard]] std::string hunk(std::ptrdiff_t start, std::ptrdiff_t end) const {
    int old_count = 0, new_count = 0;
    for (std::ptrdiff_t k = start; k < end; ++k) {
      if (ops_[k].type != '+') ++old_count;
      if (ops_[k].type != '-') ++new_count;
    }
    std::string out = fmt::format("@@ -{} +{} @@\n", hunk_range(ops_[start].a, old_count),
                                  hunk_range(ops_[start].b, new_count));
    for (std::ptrdiff_t k = start; k < end; ++k) out += line_of(ops_[k]);
    return out;
  }

  [[nodiscard]] std::string line_of(const Op& op) const {
    const bool old_side = op.type != '+';
    const auto& t = old_side ? a_ : b_;
    const auto index = static_cast<std::size_t>(old_side ? op.a : op.b);
    std::string s(1, op.type);
    s.append(t.lines[index]);
    s += '\n';
    if (index + 1 == t.lines.size() && !t.last_newline) s += "\\ No newline at end of file\n";
    return s;
  }

  const Text& a_;
  const Text& b_;
  const std::vector<Op>& ops_;
  std::ptrdiff_t context_;
};

}  // namespace

std::string unified_diff(std::string_view a, std::string_view b, const std::string& a_name,
                         const std::string& b_name, int context) {
  if (a == b) return "";
  const auto ta = split_text(a), tb = split_text(b);
  LineIds ids;
  const auto ia = ids.of(ta), ib = ids.of(tb);
  const LineDiff lcs(ia, ib);
  const auto ops = edit_script(lcs.a_kept(), lcs.b_kept());
  const auto hunks = HunkWriter(ta, tb, ops, std::max(context, 0)).hunks();
  if (hunks.empty()) return "";
  return fmt::format("--- {}\n+++ {}\n", a_name, b_name) + hunks;
}

}  // namespace util
