#include "src/run/cache_entry_schema.hpp"

#include <cmath>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "src/run/worker_protocol.hpp"

namespace portcheck {
namespace {

// What is wrong with a value, named `where` in the message; empty when nothing is.
using Check = std::string (*)(const nlohmann::json& value, const std::string& where);

struct Field {
  std::string_view name;
  Check check;
  bool required;
};

bool is_count(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
}

std::string text(const nlohmann::json& v, const std::string& where) {
  return v.is_string() ? "" : where + " is not text";
}
std::string number(const nlohmann::json& v, const std::string& where) {
  return is_count(v) ? "" : where + " is not a number";
}
std::string integer(const nlohmann::json& v, const std::string& where) {
  return v.is_number_integer() && is_count(v) ? "" : where + " is not a whole number";
}
std::string table(const nlohmann::json& v, const std::string& where) {
  return v.is_object() ? "" : where + " is not a table";
}

// Everything an entry holds (check/cell_cache.cpp writes it, ResultCache seals it).
constexpr Field kEntry[] = {
    {"key", text, true},        {"origin", text, true},    {"stderr", text, true},
    {"last_stage", text, true}, {"wall_s", number, true},  {"peak_rss_bytes", number, true},
    {"result", table, true},    {"schema", integer, true}, {"checksum", text, true},
};

std::string problem_in(const nlohmann::json& object, std::span<const Field> fields,
                       const std::string& where) {
  if (!object.is_object()) return where + " is not a table";
  for (const auto& [key, value] : object.items()) {
    const Field* field = nullptr;
    for (const auto& f : fields)
      if (f.name == key) field = &f;
    if (field == nullptr) return fmt::format("{}.{} is no field the tool writes", where, key);
    if (auto problem = field->check(value, fmt::format("{}.{}", where, key)); !problem.empty())
      return problem;
  }
  for (const auto& field : fields)
    if (field.required && !object.contains(field.name))
      return fmt::format("{}.{} is missing", where, field.name);
  return "";
}

}  // namespace

std::string cache_entry_problem(const nlohmann::json& entry) {
  if (auto problem = problem_in(entry, kEntry, "entry"); !problem.empty()) return problem;
  // The result is the worker's compile_result, as the protocol defines it (worker_protocol.hpp).
  if (auto problem = protocol_problem("compile_result", entry["result"]))
    return "result: " + *problem;
  return "";
}

}  // namespace portcheck
