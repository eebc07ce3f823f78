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

// "8GiB", "512MiB", "2G", "1000000" -> bytes; nullopt when malformed.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
std::string format_bytes(std::uint64_t bytes);

// Lowercase hex SHA-1 of `data` (for fingerprints, not security).
std::string sha1_hex(std::string_view data);

}  // namespace util
