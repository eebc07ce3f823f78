#include "src/check/triton_validation.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/core/target.hpp"
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

void validate_options(const KernelRow& row, const OptionFields& fields,
                      const std::vector<std::string>& targets) {
  std::set<std::string> valid, all;
  for (const auto& [backend, names] : fields) all.insert(names.begin(), names.end());
  for (const auto& t : targets)
    if (const auto it = fields.find(std::string(checked_target(t).backend.name()));
        it != fields.end())
      valid.insert(it->second.begin(), it->second.end());
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

void validate_arguments(const KernelRow& row, const InspectedKernel& info) {
  const auto& args = info.args;
  const std::set<std::string> arg_set(args.begin(), args.end());
  const std::set<std::string> constexprs(info.constexprs.begin(), info.constexprs.end());
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

// Where `target` was asked for: the flag, the first row whose own `targets` name it, or the
// manifest's [defaults] (the built-in list when it has none).
std::string target_origin(const Manifest& manifest, const Matrix& matrix,
                          const std::string& target) {
  if (matrix.targets_from_flag) return "--targets";
  for (const auto& row : manifest.rows)
    if (std::find(row.targets.begin(), row.targets.end(), target) != row.targets.end())
      return row.location_of("targets").describe(row_key(row, "targets"));
  if (manifest.targets_where.line == 0)
    return fmt::format("{}: the default targets", manifest.file.string());
  return manifest.targets_where.describe("defaults.targets");
}

// "cuda:75, cuda:80, ..." for a short list, else the nearest few the probe chose.
std::string valid_targets(const std::string& backend, const TargetProblem& unsupported) {
  constexpr std::size_t kWholeList = 24;
  const bool whole = unsupported.valid.size() <= kWholeList;
  std::vector<std::string> names;
  for (const auto& arch : whole ? unsupported.valid : unsupported.nearest)
    names.push_back(fmt::format("{}:{}", backend, arch));
  if (names.empty()) return "";
  return fmt::format("; {}: {}", whole ? "valid targets" : "nearest valid targets",
                     util::join(names, ", "));
}

}  // namespace

std::string target_problem(const TargetDescription& described, const std::string& triton_version) {
  const auto& name = described.name;
  const auto& backend = described.backend;
  const auto& unsupported = described.unsupported.value();
  const auto& reason = unsupported.reason;
  const auto& message = unsupported.message;
  if (reason == "unknown")
    return fmt::format("'{}' is not a target the installed Triton {} knows: {}{}", name,
                       triton_version, message, valid_targets(backend, unsupported));
  if (reason == "unsupported")
    return fmt::format(
        "'{}' is {} architecture, but the installed Triton {} cannot compile for it: {}{}", name,
        backend == "cuda" ? "a CUDA" : "an AMD", triton_version, message,
        valid_targets(backend, unsupported));
  return fmt::format("the installed Triton {} refuses target '{}': {}{}", triton_version, name,
                     message, valid_targets(backend, unsupported));
}

void validate_targets(const Manifest& manifest, const Matrix& matrix,
                      const std::vector<TargetDescription>& probed_targets,
                      const std::string& triton_version) {
  for (const auto& described : probed_targets) {
    if (!described.unsupported || is_shipped_target(described.name)) continue;
    throw UsageError(fmt::format("{}: {}", target_origin(manifest, matrix, described.name),
                                 target_problem(described, triton_version)));
  }
}

std::map<std::string, TargetDescription> unsupported_targets(
    const std::vector<TargetDescription>& probed_targets) {
  std::map<std::string, TargetDescription> out;
  for (const auto& described : probed_targets)
    if (described.unsupported) out.emplace(described.name, described);
  return out;
}

void validate_targets_across(const Manifest& manifest, const Matrix& matrix,
                             const std::vector<ReleaseTargets>& releases) {
  if (releases.empty()) return;
  for (const auto& column : matrix.columns) {
    if (is_shipped_target(column)) continue;
    std::vector<std::string> reasons;
    for (const auto& release : releases) {
      const auto it = release.unsupported.find(column);
      if (it == release.unsupported.end()) break;
      reasons.push_back(target_problem(it->second, release.triton_version));
    }
    if (reasons.size() < releases.size()) continue;  // some release compiles for it
    if (releases.size() == 1)
      throw UsageError(fmt::format("{}: {}", target_origin(manifest, matrix, column), reasons[0]));
    throw UsageError(fmt::format("{}: no requested Triton release can compile for '{}': {}",
                                 target_origin(manifest, matrix, column), column,
                                 util::join(reasons, " | ")));
  }
}

void validate_against_triton(const Manifest& manifest, const OptionFields& option_fields,
                             const std::map<std::string, InspectedKernel>& kernels,
                             const std::map<std::string, std::vector<std::string>>& row_targets,
                             const std::set<std::string>* only_rows) {
  for (const auto& row : manifest.rows) {
    if (only_rows != nullptr && only_rows->count(row.display_name()) == 0) continue;
    validate_options(row, option_fields, row_targets.at(row.display_name()));
    if (row.specialization) continue;
    // A module whose import failed (or was never reached) is reported through its cells.
    const auto info = kernels.find(row.display_name());
    if (info == kernels.end()) continue;
    // A failed import is reported per cell as an import-error.
    if (!info->second.ok) continue;
    validate_arguments(row, info->second);
  }
}

}  // namespace portcheck
