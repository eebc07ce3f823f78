#include "src/core/ir_text.hpp"

#include <algorithm>
#include <optional>

#include "util/ascii.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

using util::ascii::is_alnum;
using util::ascii::is_alpha;
using util::ascii::is_digit;
using util::ascii::is_hex;

bool ident_char(char ch) { return util::ascii::is_word(ch) || ch == '.' || ch == '$'; }

std::size_t skip_digits(std::string_view line, std::size_t i) {
  while (i < line.size() && is_digit(line[i])) ++i;
  return i;
}

void trim_trailing_blanks(std::string& s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
}

// ---- paths -------------------------------------------------------------------------------------
// A scanner, not std::regex: libstdc++'s matcher recurses once per character of a match, and a
// path-like run of 20,000+ characters (user text in a compiler message, a huge IR line)
// overflowed the stack (issue 14).

// A character a path segment may hold: not blank, not '/', not the syntax's punctuation.
bool path_char(char ch, PathSyntax syntax) {
  static constexpr std::string_view kMessageStops = " \t\n\v\f\r/:'\"`,;()";
  static constexpr std::string_view kIrStops = "<>[]{}";
  if (kMessageStops.find(ch) != std::string_view::npos) return false;
  return syntax == PathSyntax::message || kIrStops.find(ch) == std::string_view::npos;
}

// "tmpab3x_9z.ptx" (tmp, 4+ word characters, an optional .extension): the length of that prefix
// of `name`, or 0.
std::size_t temp_name_length(std::string_view name) {
  const auto word = [](char ch) { return is_alnum(ch) || ch == '_'; };
  if (!name.starts_with("tmp")) return 0;
  std::size_t j = 3;
  while (j < name.size() && word(name[j])) ++j;
  if (j - 3 < 4) return 0;
  if (j + 1 < name.size() && name[j] == '.' && word(name[j + 1])) {
    ++j;
    while (j < name.size() && word(name[j])) ++j;
  }
  return j;
}

// Appends the normal form of a path whose file name is text[last_segment, end) to `out`.
void append_path(std::string_view text, std::size_t last_segment, std::size_t end,
                 std::string& out) {
  const auto name = text.substr(last_segment, end - last_segment);
  if (const auto n = temp_name_length(name); n > 0) {
    out += "<tmpfile>";
    out.append(name.substr(n));
  } else {
    out += "<path>/";
    out.append(name);
  }
}

// ---- locations ----------------------------------------------------------------------------------

// Lines that only say where something came from.
bool location_only(std::string_view line) {
  const auto t = util::trim(line);
  if (t.starts_with("#loc") && t.find(" = loc(") != std::string_view::npos) return true;
  if (t.starts_with(".loc") && t.size() > 4 && (t[4] == ' ' || t[4] == '\t')) return true;
  if (t.starts_with("!") && t.find("= !DILocation(") != std::string_view::npos) return true;
  return false;
}

// Past the ')' that closes the "loc(" at `i` (nested parentheses and quoted strings respected);
// nullopt when the line ends first.
std::optional<std::size_t> end_of_loc(std::string_view line, std::size_t i) {
  std::size_t j = i + 4;
  int depth = 1;
  bool quoted = false;
  for (; j < line.size() && depth > 0; ++j) {
    const char ch = line[j];
    if (quoted) {
      if (ch == '\\')
        ++j;
      else if (ch == '"')
        quoted = false;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == '(') {
      ++depth;
    } else if (ch == ')') {
      --depth;
    }
  }
  if (depth != 0) return std::nullopt;
  return j;
}

// Removes " loc(...)" and ", !dbg !N".
std::string strip_locations(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  while (i < line.size()) {
    if (line.compare(i, 4, "loc(") == 0 && (i == 0 || !ident_char(line[i - 1])) &&
        (i == 0 || line[i - 1] != '#')) {
      if (const auto end = end_of_loc(line, i)) {
        trim_trailing_blanks(out);
        i = *end;
        continue;
      }
    }
    if (line.compare(i, 8, ", !dbg !") == 0) {
      const std::size_t j = skip_digits(line, i + 8);
      if (j > i + 8) {
        i = j;
        continue;
      }
    }
    out += line[i++];
  }
  return out;
}

// ---- tokens -------------------------------------------------------------------------------------

// %12, %arg3, %r12 (PTX) -> N; MLIR's uniquing suffix goes (%cst_0 -> %cst, %c0_i32_7 ->
// %c0_i32). A constant's name is its value (%c32_i32, %c64): it stays, or two constants would
// read alike wherever they are used. %tid.x and %cst stay.
std::string normalize_ssa_name(std::string_view name) {
  std::string_view rest = name;
  if (const auto underscore = rest.rfind('_');
      underscore != std::string_view::npos && underscore > 0 && underscore + 1 < rest.size() &&
      is_alpha(rest[0]) &&
      std::all_of(rest.begin() + underscore + 1, rest.end(), [](char ch) { return is_digit(ch); }))
    rest = rest.substr(0, underscore);
  std::size_t j = 0;
  while (j < rest.size() && (is_alpha(rest[j]) || rest[j] == '_')) ++j;
  if (j == 1 && rest[0] == 'c' && j < rest.size() && is_digit(rest[j])) return std::string(rest);
  const std::size_t k = skip_digits(rest, j);
  if (k > j && (k == rest.size() || rest[k] == '_' || rest[k] == '.'))
    return "N" + std::string(rest.substr(k));
  return std::string(rest);
}

// A rule for the token that starts at line[i]: when the token is of its kind it appends the
// token's normal form to `out` and returns the index just past the token, else nullopt.
using TokenRule = std::optional<std::size_t> (*)(std::string_view line, std::size_t i,
                                                 std::string& out);

// An SSA value (%12, %arg3, %cst_0), with a multi-result op's result number (%0#1).
std::optional<std::size_t> ssa_value(std::string_view line, std::size_t i, std::string& out) {
  if (line[i] != '%') return std::nullopt;
  std::size_t j = i + 1;
  while (j < line.size() && ident_char(line[j])) ++j;
  out += '%';
  out += normalize_ssa_name(line.substr(i + 1, j - i - 1));
  if (out.ends_with("%N") && j + 1 < line.size() && line[j] == '#' && is_digit(line[j + 1]))
    j = skip_digits(line, j + 1);
  return j;
}

// #loc12 -> #loc.
std::optional<std::size_t> loc_reference(std::string_view line, std::size_t i, std::string& out) {
  const bool boundary = i == 0 || !ident_char(line[i - 1]);
  if (!boundary || line.compare(i, 4, "#loc") != 0) return std::nullopt;
  out += "#loc";
  return skip_digits(line, i + 4);
}

// An MLIR block: ^bb3 -> ^bbN.
std::optional<std::size_t> mlir_block(std::string_view line, std::size_t i, std::string& out) {
  if (line.compare(i, 3, "^bb") != 0 || i + 3 >= line.size() || !is_digit(line[i + 3]))
    return std::nullopt;
  out += "^bbN";
  return skip_digits(line, i + 3);
}

// A PTX or AMDGCN block label: $L__BB0_2 -> $L__BBN, .LBB1_3 -> .LBBN.
std::optional<std::size_t> asm_block_label(std::string_view line, std::size_t i, std::string& out) {
  for (const std::string_view label : {std::string_view("$L__BB"), std::string_view(".LBB")}) {
    if (line.compare(i, label.size(), label) == 0 && i + label.size() < line.size() &&
        is_digit(line[i + label.size()])) {
      std::size_t j = i + label.size();
      while (j < line.size() && (is_digit(line[j]) || line[j] == '_')) ++j;
      out += label;
      out += 'N';
      return j;
    }
  }
  return std::nullopt;
}

// A hex number of an address's length (9 to 12 digits, or more than 16) -> 0x?; shorter ones
// and 16-digit ones (LLVM's float constants) stay.
std::optional<std::size_t> hex_number(std::string_view line, std::size_t i, std::string& out) {
  if (line[i] != '0' || i + 1 >= line.size() || (line[i + 1] != 'x' && line[i + 1] != 'X') ||
      (i > 0 && is_alnum(line[i - 1])))
    return std::nullopt;
  std::size_t j = i + 2;
  while (j < line.size() && is_hex(line[j])) ++j;
  const auto digits = j - i - 2;
  if ((j == line.size() || !is_alnum(line[j])) && ((digits >= 9 && digits <= 12) || digits > 16))
    out += "0x?";
  else
    out.append(line.substr(i, j - i));
  return j;
}

// A word of 32 or more hex digits (a hash) -> <hash>; any other word that starts with a hex
// digit is copied whole, so that a hash cannot start inside it.
std::optional<std::size_t> hash_or_word(std::string_view line, std::size_t i, std::string& out) {
  if (!is_hex(line[i]) || (i > 0 && is_alnum(line[i - 1]))) return std::nullopt;
  std::size_t j = i;
  while (j < line.size() && is_hex(line[j])) ++j;
  if (j - i >= 32 && (j == line.size() || !is_alnum(line[j]))) {
    out += "<hash>";
    return j;
  }
  while (j < line.size() && is_alnum(line[j])) ++j;
  out.append(line.substr(i, j - i));
  return j;
}

constexpr TokenRule kTokenRules[] = {ssa_value,       loc_reference, mlir_block,
                                     asm_block_label, hex_number,    hash_or_word};

std::string normalize_tokens(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  // An LLVM numbered block label: "12:".
  if (const std::size_t j = skip_digits(line, 0); j > 0 && j < line.size() && line[j] == ':') {
    out += "N:";
    i = j + 1;
  }
  while (i < line.size()) {
    std::optional<std::size_t> next;
    for (const auto rule : kTokenRules)
      if ((next = rule(line, i, out))) break;
    if (next) {
      i = *next;
    } else {
      out += line[i++];
    }
  }
  return out;
}

}  // namespace

std::string normalize_paths(std::string_view text, PathSyntax syntax) {
  if (text.find('/') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    // At least two "/segment" in a row make a path: the last is its file name.
    std::size_t j = i;
    std::size_t segments = 0;
    std::size_t last_segment = 0;
    while (j + 1 < text.size() && text[j] == '/' && path_char(text[j + 1], syntax)) {
      last_segment = j + 1;
      for (++j; j < text.size() && path_char(text[j], syntax);) ++j;
      ++segments;
    }
    if (segments >= 2) {
      append_path(text, last_segment, j, out);
    } else {
      if (j == i) ++j;
      out.append(text.substr(i, j - i));
    }
    i = j;
  }
  return out;
}

std::string without_value_names(std::string_view ir) {
  std::string out;
  out.reserve(ir.size());
  for (std::size_t i = 0; i < ir.size(); ++i) {
    out += ir[i];
    if (ir[i] != '%') continue;
    while (i + 1 < ir.size() && (ident_char(ir[i + 1]) || ir[i + 1] == '#')) ++i;
  }
  return out;
}

std::string normalize_ir(std::string_view ir) {
  std::string out;
  out.reserve(ir.size());
  std::size_t pos = 0;
  while (pos < ir.size()) {
    auto end = ir.find('\n', pos);
    if (end == std::string_view::npos) end = ir.size();
    auto line = ir.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (location_only(line)) continue;
    auto normal = normalize_tokens(normalize_paths(strip_locations(line), PathSyntax::ir));
    trim_trailing_blanks(normal);
    out += normal;
    out += '\n';
  }
  return out;
}

}  // namespace portcheck
