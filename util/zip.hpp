#pragma once
// Reading a zip archive's (a Python wheel's) central directory without unpacking it.
#include <cstdint>
#include <filesystem>
#include <optional>

namespace util {

// The sum of the uncompressed sizes in a zip's central directory, zip64 included; nullopt when
// the file is not a readable zip.
std::optional<std::uint64_t> zip_uncompressed_bytes(const std::filesystem::path& zip);

}  // namespace util
