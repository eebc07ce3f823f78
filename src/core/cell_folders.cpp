#include "src/core/cell_folders.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace portcheck {

namespace {

bool safe_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '.' || ch == '_' || ch == '-';
}

bool is_plain(std::string_view name) {
  return !name.empty() && name.size() <= kMaxPlainFolder && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), safe_char);
}

// `name` itself when plain; else `readable` made safe and short, then '~' and a hash of `name`.
std::string folder_for(std::string_view name, std::string readable) {
  if (is_plain(name)) return std::string(name);
  if (!readable.empty() && readable.front() == '.') readable.front() = '_';
  readable.resize(std::min(readable.size(), kMaxPlainFolder));
  return readable + "~" + util::sha1_hex(name).substr(0, 8);
}

std::string with_safe_chars(std::string_view text) {
  std::string out;
  for (char ch : text) out += safe_char(ch) ? ch : '_';
  return out;
}

}  // namespace

std::string ir_target_folder(std::string_view target) {
  // "cuda:90" -> "cuda_90": target names are validated, so this alone stays one-to-one.
  if (target.find(':') != std::string_view::npos && is_plain(with_safe_chars(target)) &&
      std::count(target.begin(), target.end(), ':') == 1 &&
      target.find('_') == std::string_view::npos)
    return with_safe_chars(target);
  return folder_for(target, with_safe_chars(target));
}

std::string ir_row_folder(std::string_view row) {
  std::string readable;
  for (char ch : row) {
    if (ch == '[')
      readable += '-';
    else if (ch != ']')
      readable += safe_char(ch) ? ch : '_';
  }
  return folder_for(row, readable);
}

}  // namespace portcheck
