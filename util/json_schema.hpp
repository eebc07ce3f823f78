#pragma once
// Checks JSON documents against a JSON Schema (draft 2020-12), the subset that describes the
// shape of messages: type, properties, required, additionalProperties, items, enum, const, oneOf,
// minimum, minLength (in characters) and $ref to "#/$defs/NAME". A schema using any other keyword
// that constrains is refused when it is loaded, so that a schema never promises more than is
// checked. python/portcheck_worker's base/schema.py is the same subset in Python; a test holds the
// two to the same answers.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace util {

class JsonSchema {
 public:
  // Throws std::invalid_argument naming the keyword and where it is when `schema` uses one this
  // class does not check, or a $ref it cannot resolve.
  explicit JsonSchema(nlohmann::json schema);

  // Why `value` is not an instance of $defs[definition], naming the member:
  // "compile_result.stages.ttir: expected number, found string"; nullopt when it is one.
  // Throws std::invalid_argument when the schema has no such definition.
  [[nodiscard]] std::optional<std::string> problem(std::string_view definition,
                                                   const nlohmann::json& value) const;

  [[nodiscard]] bool defines(std::string_view definition) const;
  [[nodiscard]] const nlohmann::json& document() const { return schema_; }

 private:
  [[nodiscard]] std::optional<std::string> check(const nlohmann::json& schema,
                                                 const nlohmann::json& value,
                                                 const std::string& path) const;
  [[nodiscard]] std::optional<std::string> check_object(const nlohmann::json& schema,
                                                        const nlohmann::json& value,
                                                        const std::string& path) const;
  [[nodiscard]] std::optional<std::string> check_one_of(const nlohmann::json& schema,
                                                        const nlohmann::json& value,
                                                        const std::string& path) const;
  [[nodiscard]] const nlohmann::json& resolve(const nlohmann::json& ref) const;

  nlohmann::json schema_;
};

}  // namespace util
