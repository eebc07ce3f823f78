#pragma once
// Holds a typed message to the schema that defines it (and gives the samples two tests share): the
// members the schema has that a sample message lacks. A test whose sample has every member, and
// reads it into the struct and writes it back unchanged, fails as soon as a member is added to the
// schema and not to the struct.
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/run/worker_protocol.hpp"

namespace portcheck {

inline const nlohmann::json& definition(const nlohmann::json& schema) {
  if (!schema.contains("$ref")) return schema;
  const auto ref = schema.at("$ref").get<std::string>();  // "#/$defs/NAME"
  return worker_protocol_schema().document().at("$defs").at(ref.substr(ref.rfind('/') + 1));
}

// Whether `value` is the alternative of a oneOf that `alternative` is: it has every member the
// alternative requires, and every member the alternative fixes (a "const", the discriminator:
// status, ok, event) has that value.
inline bool is_alternative(const nlohmann::json& alternative, const nlohmann::json& value) {
  const auto& schema = definition(alternative);
  if (!schema.contains("properties")) return true;
  if (!value.is_object()) return false;
  for (const auto& key : schema.value("required", nlohmann::json::array()))
    if (!value.contains(key.get<std::string>())) return false;
  for (const auto& [key, sub] : schema.at("properties").items())
    if (sub.contains("const") && (!value.contains(key) || value.at(key) != sub.at("const")))
      return false;
  return true;
}

// The members `schema` defines that `value` (and the values under it) never has, as paths.
inline void uncovered_members(const nlohmann::json& schema_in, const nlohmann::json& value,
                              const std::string& at, std::set<std::string>& out) {
  const auto& schema = definition(schema_in);
  if (schema.contains("oneOf")) {
    for (const auto& alternative : schema.at("oneOf"))
      if ((!definition(alternative).value("type", nlohmann::json()).is_null() ||
           definition(alternative).contains("properties")) &&
          is_alternative(alternative, value))
        uncovered_members(alternative, value, at, out);
    return;
  }
  if (value.is_array() && schema.contains("items")) {
    std::set<std::string> missing_in_all;
    bool first = true;
    for (const auto& item : value) {
      std::set<std::string> missing;
      uncovered_members(schema.at("items"), item, at + "[]", missing);
      if (first) missing_in_all = missing;
      std::erase_if(missing_in_all, [&](const auto& m) { return missing.count(m) == 0; });
      first = false;
    }
    out.insert(missing_in_all.begin(), missing_in_all.end());
    return;
  }
  if (!value.is_object()) return;
  if (schema.contains("properties"))
    for (const auto& [key, sub] : schema.at("properties").items()) {
      if (!value.contains(key)) {
        out.insert(fmt::format("{}.{}", at, key));
        continue;
      }
      uncovered_members(sub, value.at(key), fmt::format("{}.{}", at, key), out);
    }
  if (schema.contains("additionalProperties") && schema.at("additionalProperties").is_object())
    for (const auto& [key, sub] : value.items())
      uncovered_members(schema.at("additionalProperties"), sub, fmt::format("{}.{}", at, key), out);
}

// A compiled kernel's metadata with every member the schema's kernel_metadata defines.
inline nlohmann::json kernel_metadata_sample() {
  return nlohmann::json{{"name", "axpy"},
                        {"hash", "d50fef"},
                        {"num_warps", 4},
                        {"num_ctas", 1},
                        {"num_stages", 3},
                        {"shared", 1024},
                        {"tmem_size", 0},
                        {"global_scratch_size", 0},
                        {"global_scratch_align", 1},
                        {"profile_scratch_size", 0},
                        {"profile_scratch_align", 1},
                        {"cluster_dims", {1, 1, 1}},
                        {"maxnreg", 128},
                        {"warp_size", 32},
                        {"target", {{"backend", "cuda"}, {"arch", 90}, {"warp_size", 32}}},
                        {"triton_version", "3.9.0"}};
}

}  // namespace portcheck
