#include "util/json_reader.hpp"

#include <cmath>

#include <fmt/format.h>

namespace util {
namespace {

std::string member_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

}  // namespace

JsonShapeError::JsonShapeError(const std::string& path, const std::string& problem)
    : std::runtime_error(path.empty() ? problem : fmt::format("{}: {}", path, problem)) {}

JsonAt::JsonAt(const nlohmann::json& value, std::string path)
    : value_(&value), path_(std::move(path)) {}

void JsonAt::fail(std::string_view expected) const {
  throw JsonShapeError(path_.empty() ? "the top level" : path_,
                       fmt::format("expected {}, found {}", expected, value_->type_name()));
}

JsonAt JsonAt::operator[](std::string_view key) const {
  if (auto member = find(key)) return *member;
  throw JsonShapeError(member_path(path_, key), "missing");
}

std::optional<JsonAt> JsonAt::find(std::string_view key) const {
  const auto& map = object();
  const auto it = map.find(key);
  if (it == map.end() || it->is_null()) return std::nullopt;
  return JsonAt(*it, member_path(path_, key));
}

std::vector<JsonAt> JsonAt::items() const {
  if (!value_->is_array()) fail("an array");
  std::vector<JsonAt> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], fmt::format("{}[{}]", path_, i));
  return out;
}

const nlohmann::json& JsonAt::object() const {
  if (!value_->is_object()) fail("an object");
  return *value_;
}

std::string JsonAt::string() const {
  if (!value_->is_string()) fail("a string");
  return value_->get<std::string>();
}

bool JsonAt::boolean() const {
  if (!value_->is_boolean()) fail("true or false");
  return value_->get<bool>();
}

double JsonAt::number() const {
  if (!value_->is_number()) fail("a number");
  return value_->get<double>();
}

std::int64_t JsonAt::integer(std::int64_t min, std::int64_t max) const {
  const auto expected = fmt::format("an integer from {} to {}", min, max);
  if (value_->is_number_unsigned()) {
    const auto v = value_->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(max)) fail(expected);
    return static_cast<std::int64_t>(v);
  }
  if (!value_->is_number_integer()) fail(expected);
  const auto v = value_->get<std::int64_t>();
  if (v < min || v > max)
    throw JsonShapeError(path_, fmt::format("expected {}, found {}", expected, v));
  return v;
}

std::vector<std::string> JsonAt::strings() const {
  if (!value_->is_array()) fail("an array of strings");
  std::vector<std::string> out;
  for (const auto& item : items()) out.push_back(item.string());
  return out;
}

std::string JsonAt::string_or(std::string_view key, std::string fallback) const {
  const auto member = find(key);
  return member ? member->string() : std::move(fallback);
}

bool JsonAt::boolean_or(std::string_view key, bool fallback) const {
  const auto member = find(key);
  return member ? member->boolean() : fallback;
}

double JsonAt::number_or(std::string_view key, double fallback) const {
  const auto member = find(key);
  return member ? member->number() : fallback;
}

std::optional<std::int64_t> integer_in(const nlohmann::json& value, std::int64_t min,
                                       std::int64_t max) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (max < 0 || v > static_cast<std::uint64_t>(max)) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  if (!value.is_number_integer()) return std::nullopt;
  const auto v = value.get<std::int64_t>();
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::optional<double> finite_number(const nlohmann::json& value) {
  if (!value.is_number()) return std::nullopt;
  const auto v = value.get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> integer_member(const nlohmann::json& object, std::string_view key,
                                           std::int64_t min, std::int64_t max) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  return it == object.end() ? std::nullopt : integer_in(*it, min, max);
}

std::optional<double> number_member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  return it == object.end() ? std::nullopt : finite_number(*it);
}

std::string string_member(const nlohmann::json& object, std::string_view key,
                          std::string_view fallback) {
  if (!object.is_object()) return std::string(fallback);
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

}  // namespace util
