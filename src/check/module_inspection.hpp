#pragma once
// The user's modules are imported only where a cell's limits apply: never in the fork server or
// the environment probe, where a module that crashes, hangs or allocates without bound at import
// would take the whole run down. Before compiling, each module is imported once by an inspection
// that runs as a cell of its own (forked by the server, or a fresh worker process) and answers
// what the supervisor needs from it: argument names, cache keys, static predictions. A module
// whose inspection fails turns into red cells for its own rows, and only those.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/classify.hpp"
#include "src/check/plan.hpp"
#include "src/core/manifest.hpp"
#include "src/run/inspect_answer.hpp"
#include "src/run/process_runner.hpp"
#include "src/run/scheduler.hpp"

namespace portcheck {

// A worker run on the files of folder `dir`: `<python_argv> cell` reads request.json there and
// writes result.json, progress, stdout and stderr beside it. No limits: the caller sets them.
ProcessSpec worker_cell_spec(const std::vector<std::string>& python_argv,
                             const std::vector<std::string>& env, const std::filesystem::path& dir,
                             const std::filesystem::path& cwd);

// Removes what a cell's run left in its folder (result, progress marks, output), before it runs
// again: a second run that dies early must not be read with the first one's result.
void forget_run(const std::filesystem::path& dir);

// What a worker left in a cell's folder (result.json, progress, stderr), with how it ended;
// result.json read as the `answer_kind` of the protocol (compile_result, repro_answer).
CellEvidence evidence_from_files(const std::filesystem::path& dir, const ProcessOutcome& outcome,
                                 std::string_view answer_kind);

// The same of an inspection's folder: its answer (result.json, read as an inspect_answer) beside
// the evidence its cells get when it has none.
struct InspectionEnd {
  CellEvidence evidence;
  std::optional<InspectAnswer> answer;
};
InspectionEnd inspection_from_files(const std::filesystem::path& dir,
                                    const ProcessOutcome& outcome);

// One user module and the rows and cells that need it. The import serves all of them, so it runs
// under the most generous of their limits: a row with a long timeout is not cut short by a
// neighbour's short one.
struct ModuleToInspect {
  nlohmann::json kernels = nlohmann::json::array();  // {"id": row name, "kernel": ref}
  nlohmann::json zygote;                             // check/zygote_key.hpp: zygote_member
  // Ids into the planned cells, whose requests are written into the inspection's request as
  // they are: a copy of every request held here was the largest part of the tool's memory.
  std::vector<std::size_t> cell_ids;
  std::filesystem::path cwd;             // the manifest's folder
  std::chrono::milliseconds timeout{0};  // 0: none
  std::uint64_t max_rss_bytes = 0;       // 0: none
  // Null for a module's inspection. The target of an inspection that keys the cells of one
  // target only, importing the module under that target's driver, as those cells do: a module
  // whose import asked Triton's driver may differ from one target to the next (issue 50).
  nlohmann::json target;
};

// One inspection per user module (and import path), serving every row defined in it: the
// manifest's rows, for their argument names, and `cells`, whose cache keys and predictions it
// computes (a cell's id is its place in `cells`). A module with no cell here (another shard's)
// is left to the run that compiles it.
// Cells on a target in `skipped_targets` (one this Triton cannot compile for) are left out.
std::vector<ModuleToInspect> modules_to_inspect(const Manifest& manifest,
                                                const std::vector<PlannedCell>& cells,
                                                const std::set<std::string>& skipped_targets = {});

struct InspectionSettings {
  std::vector<std::string> python_argv;  // {python, "-m", "portcheck_worker"}
  std::vector<std::string> env;
  std::filesystem::path scratch;  // one folder per module is made under it
  nlohmann::json common;          // targets, tool_version, keys, predict
  std::size_t jobs = 1;
};

// The schema's inspect_request for `module`, as JSON text: each of its cells' requests (`cells`:
// the planned cells its ids point into) dumped into it, never copied.
std::string inspection_request(const ModuleToInspect& module, const std::vector<PlannedCell>& cells,
                               const InspectionSettings& settings);

// The answers of every module that imported cleanly, merged, and the evidence of those that did
// not, once per cell of theirs.
struct InspectionResults {
  std::map<std::string, InspectedKernel> kernels;          // by row name
  std::map<std::string, std::optional<std::string>> keys;  // by cell id: its cache key, or none
  std::optional<StaticFindings> static_result;  // with predict: the cells', seconds summed
  std::map<std::size_t, CellEvidence> failed;   // cell id -> its module's fault
  int rerun_fresh = 0;  // inspections run again in a fresh process (check/fork_hazard.hpp)
};

// The evidence of a row whose module imported in the inspection but raised (`kernel`: its entry
// of InspectionResults::kernels): the result the worker wrote for its cells, an import-error.
// nullopt when the row's function was found.
std::optional<CellEvidence> import_failure(const InspectedKernel& kernel);

// The modules' inspections as tasks of the run that compiles their cells (a module's cells can
// start as soon as its own inspection has answered, while the others import): their tasks, with
// ids from `first_id` on, and what each end means.
class ModuleInspections {
 public:
  // `cells`: the planned cells the modules' ids point into, which outlive this.
  ModuleInspections(std::vector<ModuleToInspect> modules, const std::vector<PlannedCell>& cells,
                    InspectionSettings settings, ProcessRunner::Id first_id);

  // One task per module (its folder and request written).
  [[nodiscard]] std::vector<Task> tasks() const;
  [[nodiscard]] bool owns(ProcessRunner::Id id) const {
    return id >= first_id_ && id - first_id_ < modules_.size();
  }
  [[nodiscard]] std::size_t pending() const { return pending_; }

  // An inspection that failed in a process with threads (a zygote's) runs again fresh: every
  // cell of its module would otherwise carry what may be a fork hazard. nullopt: it ended.
  std::optional<ProcessSpec> rerun(ProcessRunner::Id id, const ProcessOutcome& outcome);

  // One module whose inspection has ended: the ids of the cells it lets start, its rows' names,
  // and the inspections per target it asks for instead (their cells start when those end).
  struct Inspected {
    std::vector<std::size_t> cells;
    std::set<std::string> rows;
    std::optional<std::size_t> per_target;  // the module to pass to inspect_per_target()
  };
  // Takes in what the inspection answered (or its fault, for each of its module's cells); returns
  // the module's cells and rows, or nothing when the run was interrupted before it ended. A module
  // whose import asked Triton's driver, with keys asked for, is inspected again for each target of
  // its cells; such an inspection that fails only leaves its cells without keys (they compile).
  std::optional<Inspected> ended(ProcessRunner::Id id, const ProcessOutcome& outcome);

  // The inspections per target that ended() asked for (`module`: Inspected::per_target), as
  // tasks of the run; their ends let the cells of their targets start.
  std::vector<Task> inspect_per_target(std::size_t module);

  [[nodiscard]] const InspectionResults& results() const { return results_; }

 private:
  [[nodiscard]] std::filesystem::path dir_of(std::size_t module) const;

  std::vector<ModuleToInspect> modules_;
  const std::vector<PlannedCell>& cells_;
  InspectionSettings settings_;
  ProcessRunner::Id first_id_;
  std::size_t pending_;
  std::set<std::size_t> rerun_;  // modules run again fresh
  InspectionResults results_;
};

}  // namespace portcheck
