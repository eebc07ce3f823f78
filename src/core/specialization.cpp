#include "src/core/specialization.hpp"

#include <array>
#include <climits>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace portcheck {
namespace {

constexpr std::string_view kExpected =
    "expected the JSON object serialize_specialization_data writes: {\"signature\": {...}, "
    "\"constant_keys\": [...], \"constant_vals\": [...], \"attrs_keys\": [...], "
    "\"attrs_vals\": [...], \"options\": {...}}";

// Keys to index lists: [[0], [2]] in Triton's serialisation (longer inside a tuple). The indices
// are argument positions the worker and capture index with: non-negative ints.
bool is_index_list(const nlohmann::json& keys) {
  if (!keys.is_array()) return false;
  for (const auto& key : keys) {
    if (!key.is_array()) return false;
    for (const auto& index : key)
      if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
          index.get<std::int64_t>() > INT_MAX)
        return false;
  }
  return true;
}

std::string field_problem(const nlohmann::json& spec) {
  if (!spec.contains("signature") || !spec["signature"].is_object())
    return "\"signature\" must be an object of argument -> type";
  for (const auto& [name, type] : spec["signature"].items())
    if (!type.is_string() && !type.is_array())
      return fmt::format("\"signature\".\"{}\" must be a type string", name);
  for (const auto& [keys, values] : std::array<std::pair<const char*, const char*>, 2>{
           {{"constant_keys", "constant_vals"}, {"attrs_keys", "attrs_vals"}}}) {
    if (!spec.contains(keys) || !is_index_list(spec[keys]))
      return fmt::format("\"{}\" must be a list of argument indices such as [[0], [2]]", keys);
    if (!spec.contains(values) || !spec[values].is_array())
      return fmt::format("\"{}\" must be a list", values);
    if (spec[keys].size() != spec[values].size())
      return fmt::format("\"{}\" has {} entries but \"{}\" {}", keys, spec[keys].size(), values,
                         spec[values].size());
  }
  if (spec.contains("options") && !spec["options"].is_object())
    return "\"options\" must be an object of option -> value";
  return {};
}

}  // namespace

std::string specialization_shape_problem(const nlohmann::json& spec) {
  if (!spec.is_object()) return fmt::format("is a JSON {}, {}", spec.type_name(), kExpected);
  const auto problem = field_problem(spec);
  return problem.empty() ? "" : fmt::format("{}; {}", problem, kExpected);
}

}  // namespace portcheck
