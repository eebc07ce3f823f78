#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace util {

// A value of the wrong type (or missing) in a document read from a user. what() reads
// "cells[3].launch.problems: expected an array of strings, found boolean".
class JsonShapeError : public std::runtime_error {
 public:
  JsonShapeError(const std::string& path, const std::string& problem);
};

// One value of a parsed document and its key path: typed reads that name the key when the value
// is not what the reader expects, so a loader needs no try/catch per field and no error says
// only "type must be string, but is number". Optional members: absent and null are the same.
class JsonAt {
 public:
  explicit JsonAt(const nlohmann::json& value, std::string path = {});

  [[nodiscard]] const nlohmann::json& json() const { return *value_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] bool is_null() const { return value_->is_null(); }

  // A member that must be there / may be (nullopt when absent or null). Either needs an object.
  [[nodiscard]] JsonAt operator[](std::string_view key) const;
  [[nodiscard]] std::optional<JsonAt> find(std::string_view key) const;
  // The elements of an array.
  [[nodiscard]] std::vector<JsonAt> items() const;

  [[nodiscard]] const nlohmann::json& object() const;
  [[nodiscard]] std::string string() const;
  [[nodiscard]] bool boolean() const;
  [[nodiscard]] double number() const;  // finite
  [[nodiscard]] std::int64_t integer(std::int64_t min, std::int64_t max) const;
  [[nodiscard]] std::vector<std::string> strings() const;

  // An optional member's value, or `fallback` when absent or null.
  [[nodiscard]] std::string string_or(std::string_view key, std::string fallback = {}) const;
  [[nodiscard]] bool boolean_or(std::string_view key, bool fallback) const;
  [[nodiscard]] double number_or(std::string_view key, double fallback) const;

  // Throws JsonShapeError: "<path>: expected <expected>, found <type>".
  [[noreturn]] void fail(std::string_view expected) const;

 private:
  const nlohmann::json* value_;
  std::string path_;
};

// Lenient reads, for documents our own worker wrote that code running in the same process (the
// user's) could have damaged: a value of the wrong type, out of range or not finite is nullopt,
// never an exception or an out-of-range cast (undefined behaviour for doubles).
[[nodiscard]] std::optional<std::int64_t> integer_in(const nlohmann::json& value, std::int64_t min,
                                                     std::int64_t max);
[[nodiscard]] std::optional<double> finite_number(const nlohmann::json& value);
// A member of an object read as above; nullopt when `object` is not one or has no such member.
[[nodiscard]] std::optional<std::int64_t> integer_member(const nlohmann::json& object,
                                                         std::string_view key, std::int64_t min,
                                                         std::int64_t max);
[[nodiscard]] std::optional<double> number_member(const nlohmann::json& object,
                                                  std::string_view key);
[[nodiscard]] std::string string_member(const nlohmann::json& object, std::string_view key,
                                        std::string_view fallback);

// A member of an object a JSON Schema has checked, of the type the schema gives it: nullopt when
// absent or null. On an unchecked object it throws nlohmann's type_error.
template <typename T>
[[nodiscard]] std::optional<T> optional_member(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// Its twin for writing such an object: `key` set to the value, or left out when there is none.
template <typename T>
void put_optional(nlohmann::json& object, const char* key, const std::optional<T>& value) {
  if (value) object[key] = *value;
}

}  // namespace util
