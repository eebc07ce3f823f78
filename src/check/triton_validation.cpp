#include "src/check/triton_validation.hpp"

#include <set>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

std::string suggestion(const std::string& word, const std::set<std::string>& candidates) {
  const auto best = util::closest_match(word, {candidates.begin(), candidates.end()});
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

std::string row_key(const KernelRow& row, const std::string& key) {
  return fmt::format("kernel '{}'.{}", row.display_name(), key);
}

void validate_options(const KernelRow& row, const nlohmann::json& fields,
                      const std::vector<std::string>& targets) {
  std::set<std::string> valid, all;
  for (const auto& [backend, names] : fields.items())
    for (const auto& n : names) all.insert(n.get<std::string>());
  for (const auto& t : targets) {
    const auto backend = std::string(checked_target(t).backend.name());
    if (fields.contains(backend))
      for (const auto& n : fields.at(backend)) valid.insert(n.get<std::string>());
  }
  for (const auto& [name, value] : row.options.items()) {
    if (valid.count(name) != 0) continue;
    const auto key = "options." + name;
    const auto where = row.location_of(key).describe(row_key(row, key));
    if (all.count(name) != 0)
      throw UsageError(
          fmt::format("{}: '{}' is an option of another backend than the targets this row "
                      "is checked on; Triton would drop it silently",
                      where, name));
    throw UsageError(fmt::format("{}: unknown compile option '{}'{}: Triton would drop it silently",
                                 where, name, suggestion(name, valid)));
  }
}

void validate_arguments(const KernelRow& row, const nlohmann::json& info) {
  std::vector<std::string> args = info.at("args").get<std::vector<std::string>>();
  std::set<std::string> arg_set(args.begin(), args.end());
  std::set<std::string> constexprs;
  for (const auto& c : info.at("constexprs")) constexprs.insert(c.get<std::string>());
  const auto arg_list = util::join(args, ", ");
  for (const auto& field_name : {"signature", "constants"}) {
    const auto& table = std::string(field_name) == "signature" ? row.signature : row.constants;
    for (const auto& [name, value] : table.items()) {
      const auto key = std::string(field_name) + "." + name;
      if (arg_set.count(name) == 0)
        throw UsageError(fmt::format("{}: {} has no argument '{}' (its arguments: {})",
                                     row.location_of(key).describe(row_key(row, key)),
                                     row.ref.function, name, arg_list));
      if (std::string(field_name) == "signature" && constexprs.count(name) != 0)
        throw UsageError(fmt::format("{}: '{}' is a tl.constexpr: give its value in constants",
                                     row.location_of(key).describe(row_key(row, key)), name));
    }
  }
  for (const auto& arg : args)
    if (!row.signature.contains(arg) && !row.constants.contains(arg))
      throw UsageError(fmt::format(
          "{}: argument '{}' of {} has no type in signature and no value in constants",
          row.location_of("signature").describe(row_key(row, "signature")), arg, row.ref.function));
}

}  // namespace

void validate_against_triton(const Manifest& manifest, const nlohmann::json& option_fields,
                             const nlohmann::json& kernels,
                             const std::map<std::string, std::vector<std::string>>& row_targets) {
  for (const auto& row : manifest.rows) {
    validate_options(row, option_fields, row_targets.at(row.display_name()));
    if (row.specialization) continue;
    // A module whose import failed (or was never reached) is reported through its cells.
    if (!kernels.contains(row.display_name())) continue;
    const auto& info = kernels.at(row.display_name());
    if (!info.at("ok").get<bool>()) continue;  // reported per cell as an import-error
    validate_arguments(row, info);
  }
}

}  // namespace portcheck
