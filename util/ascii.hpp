#pragma once
#include <algorithm>
#include <string_view>

// ASCII character classes for the hand-written scanners that replaced std::regex on user and
// compiler text (issue 14). Unlike std::isdigit and friends they ignore the C locale and take a
// plain char, so no call needs the unsigned-char cast.
namespace util::ascii {

constexpr bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
constexpr bool is_alpha(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
constexpr bool is_alnum(char ch) { return is_digit(ch) || is_alpha(ch); }
constexpr bool is_hex(char ch) {
  return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}
// A character of a C or Python identifier: letters, digits and '_'.
constexpr bool is_word(char ch) { return is_alnum(ch) || ch == '_'; }
// What C's isspace() accepts in the "C" locale.
constexpr bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}
// [A-Za-z_][A-Za-z0-9_]*
constexpr bool is_identifier(std::string_view s) {
  return !s.empty() && !is_digit(s.front()) && std::all_of(s.begin(), s.end(), is_word);
}

}  // namespace util::ascii
