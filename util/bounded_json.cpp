#include "util/bounded_json.hpp"

#include <vector>

#include <fmt/format.h>

namespace util {
namespace {

using Json = nlohmann::json;

// nlohmann's DOM builder, plus the two things it lacks: a bound on depth and the key path of the
// value being read, so that an error can name where it is.
class BoundedSax {
 public:
  BoundedSax(Json& result, std::size_t max_depth) : dom_(result, false), max_depth_(max_depth) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const std::string& s) {
    return value() && dom_.number_float(v, s);
  }
  bool string(std::string& v) { return value() && dom_.string(v); }
  bool binary(Json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool key(std::string& k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    error_position_ = position;
    problem_ = e.what();
    return false;
  }

  [[nodiscard]] bool too_deep() const { return too_deep_; }
  [[nodiscard]] std::size_t error_position() const { return error_position_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }

  // "cells[3].launch.problems": where the parser is.
  [[nodiscard]] std::string path() const {
    std::string out;
    for (const auto& f : frames_) {
      if (f.array && f.index > 0)
        out += fmt::format("[{}]", f.index - 1);
      else if (!f.array && !f.key.empty())
        out += (out.empty() ? "" : ".") + f.key;
    }
    return out;
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // elements begun so far (arrays)
    std::string key;        // the key being read (objects)
  };

  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool open(bool array) {
    value();
    if (frames_.size() >= max_depth_) {
      too_deep_ = true;
      return false;
    }
    frames_.push_back({array, 0, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t max_depth_;
  std::vector<Frame> frames_;
  bool too_deep_ = false;
  std::size_t error_position_ = 0;
  std::string problem_;
};

// Byte offset of the bracket that opens level `max_depth + 1` (outside strings), for the message.
std::size_t offset_past_depth(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '\\')
        ++i;
      else if (ch == '"')
        quoted = false;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_depth) return i;
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return text.size();
}

// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
// without the parts our message says itself; control bytes of the input it quotes made visible.
std::string plain_problem(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    const auto close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  if (what.starts_with("parse error at line ")) {
    const auto colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  std::string out;
  for (const char ch : what) out += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
  return out;
}

std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// A key path 512 levels deep would make a message of kilobytes: keep its two ends.
std::string shown_path(const std::string& path) {
  constexpr std::size_t kEnd = 48;
  if (path.size() <= 2 * kEnd + 3) return path;
  return path.substr(0, kEnd) + "..." + path.substr(path.size() - kEnd);
}

}  // namespace

JsonInputError::JsonInputError(std::size_t line_, std::size_t column_, std::string path_,
                               std::string problem_)
    : std::runtime_error(fmt::format("line {}, column {}: {}{}", line_, column_, problem_,
                                     path_.empty() ? "" : " (at " + shown_path(path_) + ")")),
      line(line_),
      column(column_),
      path(std::move(path_)),
      problem(std::move(problem_)) {}

Json parse_json_bounded(std::string_view text, std::size_t max_depth) {
  Json result;
  BoundedSax sax(result, max_depth);
  if (Json::sax_parse(text.begin(), text.end(), &sax)) return result;
  if (sax.too_deep()) {
    const auto [line, column] = line_and_column(text, offset_past_depth(text, max_depth));
    throw JsonInputError(line, column, sax.path(),
                         fmt::format("nested deeper than {} levels", max_depth));
  }
  // nlohmann counts the position in bytes read, one past the offending one.
  const auto offset = sax.error_position() > 0 ? sax.error_position() - 1 : 0;
  const auto [line, column] = line_and_column(text, offset);
  throw JsonInputError(line, column, sax.path(), plain_problem(sax.problem()));
}

}  // namespace util
