#pragma once
// PLAN, the first stage of `check`: the manifest's rows times their targets become the cells to
// run, each with its request, limits and expected cost, and the shard this runner compiles. Pure:
// no process is started and nothing is written, so every runner of a sharded CI job computes the
// same plan from the same manifest.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/check_options.hpp"
#include "src/core/manifest.hpp"
#include "src/core/target.hpp"

namespace portcheck {

// How a row captured under device personas (`captured_as`) relates to a target's vendor:
// `own`: captured as a device of that vendor, or not captured as anyone (hand-written);
// `other_rows`: not, but other rows of its kernel were, and those are what the vendor launches;
// `foreign`: no row of its kernel was, so its options are another vendor's host choices.
enum class PersonaFit { own, other_rows, foreign };
// The vendors each kernel's rows were captured as, by the function they compile (the rows of one
// kernel may lie in several [[kernel]] blocks; a generated module's kernel by its name); a kernel
// with no `captured_as` is absent.
using CapturedVendors = std::map<std::string, std::set<Backend>>;
CapturedVendors captured_vendors(const Manifest& manifest);
PersonaFit persona_fit(const KernelRow& row, const Target& target, const CapturedVendors& vendors);

// The shape of the matrix, the same for every Triton environment of the run.
struct Matrix {
  std::vector<std::string> target_names;  // --targets, else the manifest's defaults
  bool targets_from_flag = false;         // --targets given: it replaces every row's targets
  std::vector<std::string> columns;       // every target some row is checked on, in first order
  // row name -> its targets: the run's (or the row's own), less those of a vendor whose host code
  // launched other rows of the kernel instead (capture --as: see persona_fit)
  std::map<std::string, std::vector<std::string>> row_targets;
  std::string digest;  // identifies the matrix, for merging shard reports
  CapturedVendors vendors;
};

// `manifest_text` is the manifest file's content, which the digest covers. The target names
// must be valid (run_check refuses bad ones before planning).
Matrix plan_matrix(const Manifest& manifest, const std::vector<std::string>& cli_targets,
                   std::string_view manifest_text);

// One row x one target x one Triton environment.
struct PlannedCell {
  const KernelRow* row = nullptr;  // into the Manifest planned from, which outlives the cell
  Target target;                   // its warp size the probe's once execute adopted it
  std::size_t index = 0;           // its place in the whole matrix, before sharding
  // What the worker compiles: a JSON tree while planning and execute() add to it, then sealed
  // (seal()) into its text, which is what the worker reads and several times smaller to hold
  // for every cell of the run (a tree of it was 4.6 KB a cell, launch limits included).
  nlohmann::json request;
  std::string request_text;  // once sealed
  std::string kind;          // the request's kind ("compile", "repro"), once sealed
  // The request's `launch_limits` member: its target's limits as JSON text, one copy per target
  // shared by its cells (about 1 KB a cell otherwise), written into the request by request_json().
  std::shared_ptr<const std::string> launch_limits;
  double timeout_s = 0;
  std::uint64_t max_rss = 0;
  double expected_s = 0;  // compile time estimated from the manifest alone
  std::string label;      // the Triton environment: "current" or a version
  // The personas whose host code chose this row's options, when none of them is of the target's
  // vendor (PersonaFit::foreign): its launch-limit verdicts are not the target's own.
  std::vector<std::string> host_choices_of;

  // The request as text from now on; `request` is emptied.
  void seal();
  // The request as the worker reads it, and its kind, sealed or not.
  [[nodiscard]] std::string request_json() const;
  [[nodiscard]] std::string request_kind() const;
  // The request as a tree (the sealed one parsed again), for the few readers of one member.
  [[nodiscard]] nlohmann::json parsed_request() const;
};

// The cells of environment `label`, row-major in manifest order, narrowed to options.shard.
std::vector<PlannedCell> plan_cells(const Manifest& manifest, const Matrix& matrix,
                                    const CheckOptions& options, const std::string& label);

// Everything one Triton environment's execution needs, decided before any process starts:
// execute() consumes it and asks nothing more of planning.
struct Plan {
  std::string label;               // the Triton environment: "current" or a version
  std::vector<PlannedCell> cells;  // plan_cells
  // --reduce: for each cell, the cell that stands for it (check/reduce.hpp); without it, itself.
  std::vector<std::size_t> representative;
  nlohmann::json probe_request;  // what the environment is asked first: the tool, the targets
  nlohmann::json warm_targets;   // one target per backend, for the fork server's warm-up
};
Plan plan_environment(const Manifest& manifest, const Matrix& matrix, const CheckOptions& options,
                      const std::string& label);

// Bigger tiles and deeper pipelines compile longer: the estimate that orders first starts and
// balances shards until a real timing is known.
double expected_seconds(const KernelRow& row, const Target& target);

}  // namespace portcheck
