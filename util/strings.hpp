#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace util {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
std::vector<std::string> split_lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// `text` as one word of a POSIX shell command: single-quoted, its quotes spelled '\''.
std::string shell_quoted(std::string_view text);

// The candidate nearest to `word` by edit distance, if it is at most 2 edits away (the first of
// equally near ones): what a "did you mean" names. Empty when none is that near.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "8GiB", "512MiB", "2G", "1000000" -> bytes; nullopt when malformed.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
std::string format_bytes(std::uint64_t bytes);
// A duration as a person reads it at a glance: "8 s", "3 min 05 s", "2 h 07 min".
std::string format_duration(double seconds);

// The code points of UTF-8 `text`. Each byte that does not start a well-formed sequence (a stray
// continuation byte, a truncated sequence, an overlong encoding, a surrogate, a code point above
// U+10FFFF) becomes U+FFFD, and decoding goes on with the next byte.
std::u32string utf8_codepoints(std::string_view text);

// Appends the code point `cp` (at most U+10FFFF) as UTF-8.
void append_utf8(std::string& out, char32_t cp);

// `text` with every invalid sequence replaced by U+FFFD, as utf8_codepoints decides; valid UTF-8
// comes back unchanged.
std::string valid_utf8(std::string_view text);

// Lowercase hex SHA-1 of `data` (for fingerprints, not security).
std::string sha1_hex(std::string_view data);

}  // namespace util
