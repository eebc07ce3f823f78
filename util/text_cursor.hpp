#pragma once
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>

#include "util/ascii.hpp"

namespace util {

// Reads text left to right, for the hand-written scanners that replaced std::regex on user and
// compiler text (libstdc++'s matcher recurses once per character and overflows the stack on a
// long line). Every take_ call moves past what it took, or takes nothing and returns false.
class TextCursor {
 public:
  explicit TextCursor(std::string_view text, std::size_t at = 0) : text_(text), at_(at) {}
  [[nodiscard]] bool done() const { return at_ >= text_.size(); }
  [[nodiscard]] std::size_t at() const { return at_; }
  [[nodiscard]] std::string_view rest() const { return done() ? "" : text_.substr(at_); }

  bool take(std::string_view word) {
    if (text_.substr(std::min(at_, text_.size()), word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  // At least one character for which `keep` holds, and every one after it.
  template <typename Keep>
  bool take_run(Keep keep) {
    const auto start = at_;
    while (at_ < text_.size() && keep(text_[at_])) ++at_;
    return at_ > start;
  }
  bool take_blanks() { return take_run(ascii::is_space); }
  bool take_digits() { return take_run(ascii::is_digit); }
  // `separator` and a number, or nothing.
  bool take_number_after(char separator) {
    if (at_ + 1 >= text_.size() || text_[at_] != separator || !ascii::is_digit(text_[at_ + 1]))
      return false;
    ++at_;
    return take_digits();
  }

 private:
  std::string_view text_;
  std::size_t at_;
};

// The end of the run of characters from s[i] for which `keep` holds (i itself when there is none).
template <typename Keep>
[[nodiscard]] std::size_t skip_while(std::string_view s, std::size_t i, Keep keep) {
  while (i < s.size() && keep(s[i])) ++i;
  return i;
}

// Past `word` at s[i], or nullopt when it is not there.
[[nodiscard]] inline std::optional<std::size_t> expect_at(std::string_view s, std::size_t i,
                                                          std::string_view word) {
  if (i > s.size() || s.compare(i, word.size(), word) != 0) return std::nullopt;
  return i + word.size();
}

}  // namespace util
