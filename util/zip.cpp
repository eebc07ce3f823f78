#include "util/zip.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

namespace util {
namespace {

std::uint64_t le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool read_at(std::ifstream& in, std::uint64_t offset, std::size_t n,
             std::vector<unsigned char>& out) {
  out.resize(n);
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount()) == n;
}

}  // namespace

std::optional<std::uint64_t> zip_uncompressed_bytes(const std::filesystem::path& zip) {
  std::ifstream in(zip, std::ios::binary);
  if (!in) return std::nullopt;
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(zip, ec);
  if (ec || size < 22) return std::nullopt;
  const std::uint64_t tail_len = std::min<std::uint64_t>(size, 65535 + 22);
  std::vector<unsigned char> tail;
  if (!read_at(in, size - tail_len, tail_len, tail)) return std::nullopt;
  std::optional<std::uint64_t> eocd;
  for (std::uint64_t i = tail_len - 22 + 1; i-- > 0;) {
    if (le(&tail[i], 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (!eocd) return std::nullopt;
  const unsigned char* e = &tail[*eocd];
  std::uint64_t entries = le(e + 10, 2);
  std::uint64_t cd_size = le(e + 12, 4);
  std::uint64_t cd_offset = le(e + 16, 4);
  if (entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    if (*eocd < 20) return std::nullopt;
    const unsigned char* loc = &tail[*eocd - 20];
    if (le(loc, 4) != 0x07064b50) return std::nullopt;
    std::vector<unsigned char> rec;
    if (!read_at(in, le(loc + 8, 8), 56, rec) || le(rec.data(), 4) != 0x06064b50)
      return std::nullopt;
    entries = le(&rec[32], 8);
    cd_size = le(&rec[40], 8);
    cd_offset = le(&rec[48], 8);
  }
  if (cd_offset + cd_size > size) return std::nullopt;
  std::vector<unsigned char> cd;
  if (!read_at(in, cd_offset, cd_size, cd)) return std::nullopt;
  std::uint64_t total = 0;
  std::size_t pos = 0;
  for (std::uint64_t n = 0; n < entries; ++n) {
    if (pos + 46 > cd.size() || le(&cd[pos], 4) != 0x02014b50) return std::nullopt;
    std::uint64_t uncompressed = le(&cd[pos + 24], 4);
    const std::size_t name_len = le(&cd[pos + 28], 2);
    const std::size_t extra_len = le(&cd[pos + 30], 2);
    const std::size_t comment_len = le(&cd[pos + 32], 2);
    if (pos + 46 + name_len + extra_len + comment_len > cd.size()) return std::nullopt;
    if (uncompressed == 0xFFFFFFFF) {
      // The zip64 extra field (id 1) holds the real size first.
      std::size_t x = pos + 46 + name_len;
      const std::size_t x_end = x + extra_len;
      while (x + 4 <= x_end) {
        const auto id = le(&cd[x], 2);
        const std::size_t len = le(&cd[x + 2], 2);
        if (id == 1 && len >= 8 && x + 4 + 8 <= x_end) {
          uncompressed = le(&cd[x + 4], 8);
          break;
        }
        x += 4 + len;
      }
    }
    total += uncompressed;
    pos += 46 + name_len + extra_len + comment_len;
  }
  return total;
}

}  // namespace util
