#include "src/core/cell_folders.hpp"

namespace portcheck {

namespace {
bool safe_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '.' || ch == '_' || ch == '-';
}
}  // namespace

std::string ir_target_folder(std::string_view target) {
  std::string out;
  for (char ch : target) out += safe_char(ch) ? ch : '_';
  return out;
}

std::string ir_row_folder(std::string_view row) {
  std::string out;
  for (char ch : row) {
    if (ch == '[')
      out += '-';
    else if (ch != ']')
      out += safe_char(ch) ? ch : '_';
  }
  return out;
}

}  // namespace portcheck
