#pragma once
// What the manifest loader cannot check without Python: option names against the installed
// Triton's backends, and signature and constants against each kernel's real arguments.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/manifest.hpp"

namespace portcheck {

// `option_fields`: the probe's backend -> option names; `kernels`: the module inspection's row
// name -> {ok, args, constexprs}. Throws UsageError naming the file, line and key.
void validate_against_triton(const Manifest& manifest, const nlohmann::json& option_fields,
                             const nlohmann::json& kernels,
                             const std::map<std::string, std::vector<std::string>>& row_targets);

}  // namespace portcheck
