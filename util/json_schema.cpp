#include "util/json_schema.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace util {
namespace {

// The keywords checked (the rest of this file) and those that only annotate. Anything else is
// refused at load: a "minimum" or "pattern" the checker skipped would be a promise not kept.
constexpr std::array kCheckedKeywords = {"type",  "properties", "required", "additionalProperties",
                                         "items", "enum",       "const",    "oneOf",
                                         "$ref",  "minimum",    "minLength"};
constexpr std::array kAnnotations = {"$schema",     "$id",      "$comment", "title",
                                     "description", "examples", "default",  "$defs"};

bool known_keyword(const std::string& key) {
  const auto is = [&](const auto& table) {
    return std::find(table.begin(), table.end(), key) != table.end();
  };
  return is(kCheckedKeywords) || is(kAnnotations) || key.starts_with("x-");
}

// The schemas nested in `schema`'s keywords, each with its place for error messages.
void verify_keywords(const nlohmann::json& schema, const std::string& where);

void verify_each(const nlohmann::json& schemas, const std::string& where) {
  if (schemas.is_object())
    for (const auto& [name, sub] : schemas.items())
      verify_keywords(sub, fmt::format("{}/{}", where, name));
  else if (schemas.is_array())
    for (std::size_t i = 0; i < schemas.size(); ++i)
      verify_keywords(schemas[i], fmt::format("{}/{}", where, i));
}

void verify_keywords(const nlohmann::json& schema, const std::string& where) {
  if (schema.is_boolean()) return;
  if (!schema.is_object()) throw std::invalid_argument(where + ": a schema must be an object");
  for (const auto& [key, value] : schema.items()) {
    if (!known_keyword(key))
      throw std::invalid_argument(fmt::format("{}: keyword \"{}\" is not checked", where, key));
    if (key == "properties" || key == "$defs" || key == "oneOf")
      verify_each(value, fmt::format("{}/{}", where, key));
    if (key == "items" || key == "additionalProperties")
      verify_keywords(value, fmt::format("{}/{}", where, key));
  }
}

bool is_integer(const nlohmann::json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

bool has_type(const nlohmann::json& value, const std::string& type) {
  if (type == "integer") return is_integer(value);
  if (type == "number") return value.is_number();
  return value.type_name() == type;
}

std::optional<std::string> check_type(const nlohmann::json& type, const nlohmann::json& value,
                                      const std::string& path) {
  const auto types = type.is_array() ? type : nlohmann::json::array({type});
  for (const auto& t : types)
    if (has_type(value, t.get<std::string>())) return std::nullopt;
  std::string expected;
  for (const auto& t : types) expected += (expected.empty() ? "" : " or ") + t.get<std::string>();
  return fmt::format("{}: expected {}, found {}", path, expected, value.type_name());
}

// Characters, not bytes: UTF-8 continuation bytes are not counted (Python's len() counts the same).
std::size_t characters(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
  }));
}

std::optional<std::string> check_bounds(const nlohmann::json& schema, const nlohmann::json& value,
                                        const std::string& path) {
  if (const auto it = schema.find("minimum");
      it != schema.end() && value.is_number() && value.get<double>() < it->get<double>())
    return fmt::format("{}: {} is less than {}", path, value.dump(), it->dump());
  if (const auto it = schema.find("minLength");
      it != schema.end() && value.is_string() &&
      characters(value.get<std::string>()) < it->get<std::size_t>())
    return fmt::format("{}: {} is shorter than {} characters", path, value.dump(), it->dump());
  return std::nullopt;
}

std::string member_path(const std::string& path, const std::string& key) {
  return path + "." + key;
}

bool names_by_const(const nlohmann::json& alternative, const nlohmann::json& value) {
  if (!alternative.is_object() || !alternative.contains("properties")) return false;
  for (const auto& [key, property] : alternative["properties"].items())
    if (property.is_object() && property.contains("const") && value.contains(key) &&
        value[key] == property["const"])
      return true;
  return false;
}

bool has_required(const nlohmann::json& alternative, const nlohmann::json& value) {
  if (!alternative.is_object() || !alternative.contains("required") ||
      alternative["required"].empty())
    return false;
  return std::all_of(
      alternative["required"].begin(), alternative["required"].end(),
      [&](const auto& key) { return value.contains(key.template get<std::string>()); });
}

// The only index of `alternatives` for which `test` holds, if one.
template <typename Test>
std::optional<std::size_t> only(const std::vector<const nlohmann::json*>& alternatives, Test test) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < alternatives.size(); ++i)
    if (test(*alternatives[i])) {
      if (found) return std::nullopt;
      found = i;
    }
  return found;
}

// The alternative `value` names (see check_one_of), if one.
std::optional<std::size_t> named_alternative(const std::vector<const nlohmann::json*>& alternatives,
                                             const nlohmann::json& value) {
  if (value.is_object()) {
    for (std::size_t i = 0; i < alternatives.size(); ++i)
      if (names_by_const(*alternatives[i], value)) return i;
    if (auto found = only(alternatives, [&](const auto& a) { return has_required(a, value); }))
      return found;
  }
  return only(alternatives, [&](const nlohmann::json& a) {
    return a.is_object() && a.contains("type") && !check_type(a["type"], value, "");
  });
}

}  // namespace

JsonSchema::JsonSchema(nlohmann::json schema) : schema_(std::move(schema)) {
  verify_keywords(schema_, "#");
  // Every $ref resolves, now rather than on the first message that reaches it.
  const auto refs = [this](const auto& self, const nlohmann::json& node) -> void {
    if (node.is_object()) {
      if (const auto it = node.find("$ref"); it != node.end()) (void)resolve(*it);
      for (const auto& [key, sub] : node.items())
        if (key != "examples" && key != "const" && key != "enum" && key != "default")
          self(self, sub);
    } else if (node.is_array()) {
      for (const auto& sub : node) self(self, sub);
    }
  };
  refs(refs, schema_);
}

bool JsonSchema::defines(std::string_view definition) const {
  const auto defs = schema_.find("$defs");
  return defs != schema_.end() && defs->contains(std::string(definition));
}

std::optional<std::string> JsonSchema::problem(std::string_view definition,
                                               const nlohmann::json& value) const {
  if (!defines(definition))
    throw std::invalid_argument(fmt::format("the schema defines no \"{}\"", definition));
  return check(schema_["$defs"][std::string(definition)], value, std::string(definition));
}

const nlohmann::json& JsonSchema::resolve(const nlohmann::json& ref) const {
  constexpr std::string_view prefix = "#/$defs/";
  const auto text = ref.is_string() ? ref.get<std::string>() : std::string();
  if (text.starts_with(prefix)) {
    const auto name = text.substr(prefix.size());
    const auto defs = schema_.find("$defs");
    if (defs != schema_.end() && defs->contains(name)) return (*defs)[name];
  }
  throw std::invalid_argument(fmt::format("$ref {} does not name a definition", ref.dump()));
}

std::optional<std::string> JsonSchema::check(const nlohmann::json& schema,
                                             const nlohmann::json& value,
                                             const std::string& path) const {
  if (schema.is_boolean())
    return schema.get<bool>() ? std::nullopt : std::optional(path + ": no value is allowed here");
  if (const auto it = schema.find("$ref"); it != schema.end())
    if (auto found = check(resolve(*it), value, path)) return found;
  if (const auto it = schema.find("type"); it != schema.end())
    if (auto found = check_type(*it, value, path)) return found;
  if (const auto it = schema.find("const"); it != schema.end() && *it != value)
    return fmt::format("{}: expected {}, found {}", path, it->dump(), value.dump());
  if (const auto it = schema.find("enum");
      it != schema.end() && std::find(it->begin(), it->end(), value) == it->end())
    return fmt::format("{}: {} is not one of {}", path, value.dump(), it->dump());
  if (auto found = check_bounds(schema, value, path)) return found;
  if (value.is_object())
    if (auto found = check_object(schema, value, path)) return found;
  if (const auto it = schema.find("items"); it != schema.end() && value.is_array())
    for (std::size_t i = 0; i < value.size(); ++i)
      if (auto found = check(*it, value[i], fmt::format("{}[{}]", path, i))) return found;
  if (schema.contains("oneOf")) return check_one_of(schema, value, path);
  return std::nullopt;
}

std::optional<std::string> JsonSchema::check_object(const nlohmann::json& schema,
                                                    const nlohmann::json& value,
                                                    const std::string& path) const {
  static const nlohmann::json kNoProperties = nlohmann::json::object();
  const auto it = schema.find("properties");
  const auto& properties = it != schema.end() ? *it : kNoProperties;
  if (const auto required = schema.find("required"); required != schema.end())
    for (const auto& name : *required)
      if (!value.contains(name.get<std::string>()))
        return fmt::format("{}: missing member \"{}\"", path, name.get<std::string>());
  const auto extra = schema.find("additionalProperties");
  for (const auto& [key, member] : value.items()) {
    if (const auto p = properties.find(key); p != properties.end()) {
      if (auto found = check(*p, member, member_path(path, key))) return found;
    } else if (extra != schema.end()) {
      if (extra->is_boolean() && !extra->get<bool>())
        return fmt::format("{}: unexpected member \"{}\"", path, key);
      if (auto found = check(*extra, member, member_path(path, key))) return found;
    }
  }
  return std::nullopt;
}

// Exactly one alternative must match. When none does, the message is that of the alternative
// the value names - by a member with a "const" (a message's "op" or "event"), else as the only one
// whose required members it has, else as the only one of its type - which says what is wrong
// with it; without one, the alternatives' count.
std::optional<std::string> JsonSchema::check_one_of(const nlohmann::json& schema,
                                                    const nlohmann::json& value,
                                                    const std::string& path) const {
  std::vector<const nlohmann::json*> alternatives;
  std::vector<std::optional<std::string>> problems;
  for (const auto& alternative : schema["oneOf"]) {
    alternatives.push_back(alternative.is_object() && alternative.contains("$ref")
                               ? &resolve(alternative["$ref"])
                               : &alternative);
    problems.push_back(check(alternative, value, path));
  }
  const auto matches = std::count(problems.begin(), problems.end(), std::nullopt);
  if (matches == 1) return std::nullopt;
  if (matches > 1) return fmt::format("{}: matches {} alternatives, not one", path, matches);
  if (const auto named = named_alternative(alternatives, value)) return problems[*named];
  return fmt::format("{}: matches none of its {} alternatives", path, alternatives.size());
}

}  // namespace util
