#pragma once
// The run's targets as the worker is told them: before the probe by the rules of core/target.hpp
// (the probe's question, the fork server's warm-up), and once the probe has answered with the
// warp size the installed backend really builds for (the inspection's targets, every cell's).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/plan.hpp"
#include "src/run/probe_answer.hpp"

namespace portcheck {

// The warp size the installed backend chose for each target the probe described (by name).
using WarpSizes = std::map<std::string, int>;
WarpSizes probed_warp_sizes(const ProbeAnswer& probe);

// The run's targets as the worker is told them: every column, with its warp size from `sizes`
// where known and the rule of core/target.hpp before the probe answered.
nlohmann::json targets_json(const std::vector<std::string>& columns, const WarpSizes& sizes = {});

// One target per backend of the run, for the fork server's warm-up.
nlohmann::json warm_up_targets(const std::vector<std::string>& columns);

// Every cell's target and request take the probe's warp size, so that the inspection hashes
// cache keys, predicts and compiles for the target the installed Triton really builds.
void adopt_warp_sizes(std::vector<PlannedCell>& cells, const WarpSizes& sizes);

}  // namespace portcheck
