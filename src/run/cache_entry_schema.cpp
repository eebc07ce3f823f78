#include "src/run/cache_entry_schema.hpp"

#include <cmath>
#include <span>
#include <string_view>

#include <fmt/format.h>

namespace portcheck {
namespace {

// What is wrong with a value, named `where` in the message; empty when nothing is.
using Check = std::string (*)(const nlohmann::json& value, const std::string& where);

struct Field {
  std::string_view name;
  Check check;
  bool required;
};

std::string problem_in(const nlohmann::json& object, std::span<const Field> fields,
                       const std::string& where);

bool is_count(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
}

std::string text(const nlohmann::json& v, const std::string& where) {
  return v.is_string() ? "" : where + " is not text";
}
// Text, or null where the worker had none (a compile's TTIR key before its frontend finished).
std::string text_or_null(const nlohmann::json& v, const std::string& where) {
  return v.is_string() || v.is_null() ? "" : where + " is not text";
}
std::string name(const nlohmann::json& v, const std::string& where) {
  return v.is_string() && !v.get_ref<const std::string&>().empty() ? "" : where + " is not a name";
}
std::string number(const nlohmann::json& v, const std::string& where) {
  return is_count(v) ? "" : where + " is not a number";
}
std::string integer(const nlohmann::json& v, const std::string& where) {
  return v.is_number_integer() && is_count(v) ? "" : where + " is not a whole number";
}
// A table whose content is read leniently where it is used (metadata, resources).
std::string table(const nlohmann::json& v, const std::string& where) {
  return v.is_object() ? "" : where + " is not a table";
}
// Stage times, artefact sizes.
std::string numbers(const nlohmann::json& v, const std::string& where) {
  if (!v.is_object()) return where + " is not a table";
  for (const auto& [key, value] : v.items())
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      return fmt::format("{}.{} is not a number", where, key);
  return "";
}

constexpr Field kLocation[] = {{"file", text, true}, {"line", integer, true}};
constexpr Field kError[] = {
    {"type", name, true}, {"message", text, true}, {"traceback", text, false}};
constexpr Field kOutput[] = {{"path", text, true}, {"error", text, true}};

std::string location(const nlohmann::json& v, const std::string& where) {
  return v.is_null() ? "" : problem_in(v, kLocation, where);
}
std::string error(const nlohmann::json& v, const std::string& where) {
  return problem_in(v, kError, where);
}
std::string output(const nlohmann::json& v, const std::string& where) {
  return problem_in(v, kOutput, where);
}

// Everything an entry holds (check/cell_cache.cpp writes it, ResultCache seals it).
constexpr Field kEntry[] = {
    {"key", text, true},        {"origin", text, true},    {"stderr", text, true},
    {"last_stage", text, true}, {"wall_s", number, true},  {"peak_rss_bytes", number, true},
    {"result", table, true},    {"schema", integer, true}, {"checksum", text, true},
};
// A compile's result as the worker writes it (python/portcheck_worker/compile/stages.py), compiled
// ...
constexpr Field kCompiled[] = {
    {"status", name, true},
    {"compile_s", number, false},
    {"stages", numbers, false},
    {"metadata", table, false},
    {"sizes", numbers, false},
    {"source", location, false},
    {"resources", table, false},
    {"saved_ir", table, false},
    {"export", table, false},
    {"output_error", output, false},
    {"ttir_key", text_or_null, false},
    {"shared_with", text, false},
};
// ... or failed.
constexpr Field kFailed[] = {
    {"status", name, true},       {"stage", name, true},        {"error", error, true},
    {"stages", numbers, false},   {"compile_s", number, false}, {"error_source", location, false},
    {"source", location, false},  {"saved_ir", table, false},   {"ttir_key", text_or_null, false},
    {"shared_with", text, false},
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
  const auto& result = entry["result"];
  const auto& status = result.contains("status") ? result["status"] : nlohmann::json();
  if (status == "ok") return problem_in(result, kCompiled, "result");
  if (status == "error") return problem_in(result, kFailed, "result");
  return "result.status is neither ok nor error";
}

}  // namespace portcheck
