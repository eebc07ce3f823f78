#pragma once
// What the manifest loader cannot check without Python: option names against the installed
// Triton's backends, and signature and constants against each kernel's real arguments.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/plan.hpp"
#include "src/core/manifest.hpp"
#include "src/run/inspect_answer.hpp"
#include "src/run/probe_answer.hpp"

namespace portcheck {

// `option_fields`: the probe's backend -> option names; `kernels`: the module inspection's row
// name -> what it found. Throws UsageError naming the file, line and key. `only_rows`:
// the names of the rows to check, when not all.
void validate_against_triton(const Manifest& manifest, const OptionFields& option_fields,
                             const std::map<std::string, InspectedKernel>& kernels,
                             const std::map<std::string, std::vector<std::string>>& row_targets,
                             const std::set<std::string>* only_rows = nullptr);

// One target the probe marked "unsupported": what is wrong and which targets are valid.
std::string target_problem(const TargetDescription& described, const std::string& triton_version);

// `probed_targets`: the probe's description of each target of the matrix, with "unsupported"
// where the installed Triton cannot compile for it. Throws UsageError naming where the target
// was asked for (--targets, the manifest's [defaults] or a row's `targets`) and the valid ones;
// a target the tool ships to (default_target_names) is its cells' verdict instead.
void validate_targets(const Manifest& manifest, const Matrix& matrix,
                      const std::vector<TargetDescription>& probed_targets,
                      const std::string& triton_version);

// The probe's descriptions of the targets it marked "unsupported", by target name.
std::map<std::string, TargetDescription> unsupported_targets(
    const std::vector<TargetDescription>& probed_targets);

// One Triton release of a multi-version run: its version and the targets it cannot compile for.
struct ReleaseTargets {
  std::string triton_version;
  std::map<std::string, TargetDescription> unsupported;  // unsupported_targets() of its probe
};

// A multi-version run: throws UsageError for the first column (in matrix order) that no
// requested release can compile for, naming where it was asked for and each release's reason.
// A target only some releases refuse, or one the tool ships to, is their cells' verdict
// (unsupported-target), not an error.
void validate_targets_across(const Manifest& manifest, const Matrix& matrix,
                             const std::vector<ReleaseTargets>& releases);

}  // namespace portcheck
