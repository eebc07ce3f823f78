#pragma once
// Line diffs of two texts, as `diff -u` writes them.
#include <string>
#include <string_view>

namespace util {

// A unified diff ("--- a_name" / "+++ b_name", then @@ hunks with `context` equal lines around
// each change; changes at most 2 * context lines apart share a hunk) of two texts; empty when
// they are equal. A last line without a newline is marked "\ No newline at end of file". The
// changed lines are as few as a longest common subsequence allows: Myers' O(ND) algorithm, in
// linear space.
std::string unified_diff(std::string_view a, std::string_view b, const std::string& a_name,
                         const std::string& b_name, int context = 3);

}  // namespace util
