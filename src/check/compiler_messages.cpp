#include "src/check/compiler_messages.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "util/ascii.hpp"
#include "util/strings.hpp"
#include "util/text_cursor.hpp"

namespace portcheck {
namespace {

using util::expect_at;
using util::skip_while;
using util::ascii::is_digit;
using util::ascii::is_space;
using util::ascii::is_word;

// "FILE:12:9: error: MESSAGE" with the shortest FILE that fits.
std::optional<Diagnostic> located_error(std::string_view line) {
  for (auto colon = line.find(':'); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    const auto row_end = skip_while(line, colon + 1, is_digit);
    if (row_end == colon + 1 || row_end >= line.size() || line[row_end] != ':') continue;
    const auto column_end = skip_while(line, row_end + 1, is_digit);
    if (column_end == row_end + 1) continue;
    const auto message = expect_at(line, column_end, ": error: ");
    if (!message) continue;
    const auto row = line.substr(colon + 1, row_end - colon - 1);
    Diagnostic d{std::string(line.substr(*message)),
                 SourceLocation{std::string(line.substr(0, colon)),
                                row.size() > 9 ? 0 : std::stoi(std::string(row))}};
    if (d.where->file.empty() || d.where->file == "-" || d.where->file.starts_with("<"))
      d.where.reset();
    return d;
  }
  return std::nullopt;
}

// "error: MESSAGE" or "loc(...): error: MESSAGE".
std::optional<Diagnostic> bare_error(std::string_view line) {
  if (line.starts_with("error: ")) return Diagnostic{std::string(line.substr(7)), std::nullopt};
  const auto at = line.rfind("): error: ");
  if (line.starts_with("loc(") && at != std::string_view::npos && at >= 4)
    return Diagnostic{std::string(line.substr(at + 10)), std::nullopt};
  return std::nullopt;
}

// "line 289; error   : TEXT" at s[i]: past "error".
std::optional<std::size_t> line_and_error(std::string_view s, std::size_t i) {
  auto at = expect_at(s, skip_while(s, i, is_space), "line");
  if (!at) return std::nullopt;
  const auto number = skip_while(s, *at, is_space);
  const auto digits = skip_while(s, number, is_digit);
  if (number == *at || digits == number) return std::nullopt;
  at = expect_at(s, digits, ";");
  if (!at) return std::nullopt;
  return expect_at(s, skip_while(s, *at, is_space), "error");
}

// What follows a ptxas token at s[i]: "FILE, line 289; error   : TEXT" or "fatal   : TEXT"; the
// start of TEXT.
std::optional<std::size_t> ptxas_text(std::string_view s, std::size_t i) {
  auto at = expect_at(s, i, "fatal");
  const auto file_end = std::min(s.find_first_of(" \t\n\v\f\r", i), s.size());
  for (auto comma = s.find(',', i + 1); !at && comma < file_end; comma = s.find(',', comma + 1))
    at = line_and_error(s, comma + 1);
  if (!at) return std::nullopt;
  const auto colon = expect_at(s, skip_while(s, *at, is_space), ":");
  if (!colon) return std::nullopt;
  return skip_while(s, *colon, is_space);
}

// "TOOL: error: MESSAGE" with TOOL one word of a program's name ("ld.lld"): "TOOL: MESSAGE".
std::optional<std::string> tool_error(std::string_view line) {
  static constexpr std::string_view kMark = ": error: ";
  const auto at = line.find(kMark);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  const auto tool = line.substr(0, at);
  const auto is_tool_char = [](char ch) { return is_word(ch) || ch == '.' || ch == '-'; };
  if (!std::all_of(tool.begin(), tool.end(), is_tool_char)) return std::nullopt;
  return fmt::format("{}: {}", tool, util::trim(line.substr(at + kMark.size())));
}

// One line's backend error, as first_backend_error describes.
std::optional<std::string> backend_error(std::string_view line) {
  const auto trimmed = util::trim(line);
  if (trimmed.find("LLVM ERROR: ") != std::string_view::npos) return std::string(trimmed);
  if (auto d = located_error(trimmed)) {
    // Named by its buffer or file without the line ("triton-amdgpu-assembler:48:2" ->
    // "triton-amdgpu-assembler"): a line of generated code moves with every change to it.
    if (!d->where) return d->message;
    return fmt::format("{}: {}", std::filesystem::path(d->where->file).filename().string(),
                       d->message);
  }
  if (auto d = bare_error(trimmed)) return d->message;
  return tool_error(trimmed);
}

}  // namespace

// `AttributeError("module ... 'tgamma'")` -> `AttributeError: module ... 'tgamma'`
std::string unwrap_exception_repr(const std::string& line) {
  const auto open = line.find('(');
  if (open == std::string::npos || open == 0 || is_digit(line[0]) || line[0] == '.' ||
      line.size() < open + 4)
    return line;
  const std::string_view name(line.data(), open);
  if (!std::all_of(name.begin(), name.end(), [](char ch) { return is_word(ch) || ch == '.'; }))
    return line;
  const char quote = line[open + 1];
  if ((quote != '"' && quote != '\'') || line[line.size() - 2] != quote || line.back() != ')')
    return line;
  const std::string_view body(line.data() + open + 2, line.size() - open - 4);
  std::string out;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size() &&
        (body[i + 1] == '"' || body[i + 1] == '\'' || body[i + 1] == '\\'))
      ++i;
    out += body[i];
  }
  return std::string(name) + ": " + out;
}

std::string last_nonempty_line(const std::string& text) {
  const auto lines = util::split_lines(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!util::trim(*it).empty()) return std::string(util::trim(*it));
  return {};
}

std::optional<Diagnostic> first_mlir_error(const std::string& stderr_text) {
  for (const auto& line : util::split_lines(stderr_text)) {
    if (line.find("Failures have been detected while processing an MLIR pass pipeline") !=
        std::string::npos)
      continue;
    if (auto d = located_error(line)) return d;
    if (auto d = bare_error(line)) return d;
  }
  return std::nullopt;
}

// "Pipeline failed while executing [`PASS`" -> PASS.
std::string failing_pass(const std::string& stderr_text) {
  static constexpr std::string_view kLead = "Pipeline failed while executing [`";
  for (auto at = stderr_text.find(kLead); at != std::string::npos;
       at = stderr_text.find(kLead, at + 1)) {
    const auto begin = at + kLead.size();
    const auto end = stderr_text.find('`', begin);
    if (end == std::string::npos) return {};
    if (end > begin) return stderr_text.substr(begin, end - begin);
  }
  return {};
}

// "ptxas-blackwell /tmp/tmpab.ptx, line 289; error   : Feature ..." -> "ptxas-blackwell: Feature
// ..."
std::string ptxas_message(const std::string& text) {
  for (const auto& line : util::split_lines(text)) {
    for (auto at = line.find("ptxas"); at != std::string::npos; at = line.find("ptxas", at + 1)) {
      std::size_t begin = at;
      while (begin > 0 && !is_space(line[begin - 1])) --begin;
      const auto end = line.find_first_of(" \t\n\v\f\r", at);
      if (end == std::string::npos) break;
      const auto message = ptxas_text(line, skip_while(line, end, is_space));
      if (!message) continue;
      const auto tool = std::filesystem::path(line.substr(begin, end - begin)).filename().string();
      return fmt::format("{}: {}", tool, util::trim(std::string_view(line).substr(*message)));
    }
  }
  return {};
}

std::optional<std::string> first_backend_error(const std::string& stderr_text) {
  for (const auto& line : util::split_lines(stderr_text))
    if (auto message = backend_error(line)) return message;
  return std::nullopt;
}

}  // namespace portcheck
