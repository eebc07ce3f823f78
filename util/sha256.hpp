#pragma once
// SHA-256 (FIPS 180-4), as a Content-Security-Policy hash source names a script: sha256-<base64>.
#include <array>
#include <string>
#include <string_view>

namespace util {

std::array<unsigned char, 32> sha256(std::string_view data);

// The digest in standard base64, with padding.
std::string sha256_base64(std::string_view data);

}  // namespace util
