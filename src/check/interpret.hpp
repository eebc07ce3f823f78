#pragma once
// INTERPRET, the last stage of `check`: a cell's evidence becomes its verdict. The evidence is a
// worker's files (fresh from a compile, or the inspection's when the module failed to import), a
// cache entry, or nothing at all when the cell was not compiled (predicted to fail under
// --static skip, or --static-only). Identity, expected failures, known failures and launch
// limits are decided here, once, whatever the evidence's origin.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/check/classify.hpp"
#include "src/check/known_failures.hpp"
#include "src/check/launch_limits.hpp"
#include "src/check/plan.hpp"
#include "src/core/cell.hpp"
#include "src/run/inspect_answer.hpp"

namespace portcheck {

// What every verdict of one Triton environment is judged against.
struct Judgement {
  std::string triton_version;  // the probe's
  KnownFailures known;         // data/known-failures.toml
  LaunchLimits launch_limits;  // data/launch-limits.toml
  bool launch_limits_warn = false;
};

// What is known of one cell.
struct CellInput {
  std::optional<CellEvidence> evidence;       // nullopt: not compiled
  std::optional<StaticPrediction> predicted;  // the static pre-checks' verdict, if any
  bool cached = false;                        // the evidence came from the result cache
  // Not compiled: why this environment's Triton cannot compile for the cell's target.
  std::string unsupported_target;
};

CellResult interpret(const PlannedCell& cell, const CellInput& input, const Judgement& judgement);

}  // namespace portcheck
