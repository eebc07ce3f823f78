#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace util {

// Everything that walks a nlohmann::json (dump, copy, compare, the renderers) recurses once per
// level, so a document nested 100,000 deep overflows the stack wherever it goes next. Text from
// users is parsed with a bound instead; 512 is far beyond any report or specialisation we write.
inline constexpr std::size_t kMaxJsonDepth = 512;

// Malformed JSON, nesting past the bound, or a number past double's range (1e400). what() reads
// "line L, column C: <problem>", with " (at <key path>)" when the parser was inside a value.
class JsonInputError : public std::runtime_error {
 public:
  JsonInputError(std::size_t line, std::size_t column, std::string path, std::string problem);
  std::size_t line, column;
  std::string path;     // "cells[3].metadata", or empty at the top
  std::string problem;  // "nested deeper than 512 levels"
};

// `text` parsed as JSON with at most `max_depth` levels of arrays and objects; throws
// JsonInputError (never nlohmann's exceptions, never a stack overflow).
nlohmann::json parse_json_bounded(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

}  // namespace util
