#include "util/text_escape.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "util/strings.hpp"

namespace util {
namespace {

// The controls with a short C escape; the others are shown by their number.
constexpr std::array<std::pair<char32_t, std::string_view>, 4> kNamedControls = {{
    {U'\x1b', "\\e"},
    {U'\r', "\\r"},
    {U'\n', "\\n"},
    {U'\t', "\\t"},
}};

bool is_bidi_override(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// How `cp` is shown, or an empty string when it is shown as itself.
std::string escaped(char32_t cp, Newlines newlines) {
  if (newlines == Newlines::keep && (cp == U'\n' || cp == U'\t')) return {};
  for (const auto& [control, name] : kNamedControls)
    if (cp == control) return std::string(name);
  if (cp < 0x20 || cp == 0x7F) return fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
  if ((cp >= 0x80 && cp <= 0x9F) || is_bidi_override(cp))
    return fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
  return {};
}

bool plain_ascii(std::string_view text, Newlines newlines) {
  return std::all_of(text.begin(), text.end(), [newlines](char c) {
    return (c >= 0x20 && c < 0x7F) || (newlines == Newlines::keep && (c == '\n' || c == '\t'));
  });
}

// Unicode White_Space: what .NET's TrimStart skips before the runner looks for "::".
bool is_blank(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool starts_workflow_command(std::string_view line) {
  const auto cps = utf8_codepoints(line);
  const auto first = std::find_if_not(cps.begin(), cps.end(), is_blank);
  return cps.end() - first >= 2 && first[0] == U':' && first[1] == U':';
}

std::string one_line(std::string_view text) {
  std::string flat(text);
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  return printable(flat, Newlines::escape);
}

std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

constexpr std::string_view kWordJoiner = "\u2060";

bool is_ascii_punctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}

// "www." at `at` (any case): GitHub links it without a scheme.
bool www_dot_at(std::string_view text, std::size_t at) {
  if (text.size() - at < 4 || text[at + 3] != '.') return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(at),
                     text.begin() + static_cast<std::ptrdiff_t>(at) + 3,
                     [](char c) { return c == 'w' || c == 'W'; });
}

}  // namespace

std::string printable(std::string_view text, Newlines newlines) {
  if (plain_ascii(text, newlines)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (const char32_t cp : utf8_codepoints(text)) {
    if (auto shown = escaped(cp, newlines); !shown.empty())
      out += shown;
    else
      append_utf8(out, cp);
  }
  return out;
}

namespace {

// `text` appended to `out` with every "##[" (the runner's older command syntax, anywhere in a
// line) written as `instead`.
void append_without_old_commands(std::string& out, std::string_view text,
                                 std::string_view instead) {
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text.compare(at, 3, "##[") == 0) {
      out += instead;
      at += 2;
    } else {
      out += text[at];
    }
  }
}

}  // namespace

std::string no_workflow_commands(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start <= text.size()) {
    // The runner reads lines as .NET does: CR, LF and CRLF all end one.
    auto end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(start, end - start);
    if (starts_workflow_command(line)) out += '\\';
    append_without_old_commands(out, line, "##\\[");
    if (end == text.size()) break;
    out += text[end];
    start = end + 1;
  }
  return out;
}

std::string no_workflow_commands_in_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  append_without_old_commands(out, json, "##\\u005b");
  return out;
}

std::string markdown_code(std::string_view text, bool in_table) {
  std::string body = one_line(text);
  if (body.empty()) return {};
  if (in_table) {
    std::string piped;
    for (const char c : body) piped += c == '|' ? std::string("\\|") : std::string(1, c);
    body = std::move(piped);
  }
  const std::string fence(longest_backtick_run(body) + 1, '`');
  // A space inside each end keeps a leading or trailing backtick, or a leading and trailing space
  // (one of which CommonMark strips), part of the text.
  const bool pad =
      body.front() == '`' || body.back() == '`' || (body.front() == ' ' && body.back() == ' ');
  const char* space = pad ? " " : "";
  return fence + space + body + space + fence;
}

std::string markdown_text(std::string_view text) {
  const std::string flat = one_line(text);
  std::string out;
  out.reserve(flat.size() * 2);
  for (std::size_t at = 0; at < flat.size(); ++at) {
    const char c = flat[at];
    if (www_dot_at(flat, at)) {
      out += flat.substr(at, 3);
      out += kWordJoiner;
      at += 2;
      continue;
    }
    if (is_ascii_punctuation(c)) out += '\\';
    out += c;
    if (c == '@' || c == ':') out += kWordJoiner;
  }
  return out;
}

}  // namespace util
