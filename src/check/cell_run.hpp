#pragma once
// The cells of one environment once the probe has answered: each module's cells, once its
// inspection has, are served without a compile where they can be (a target this Triton cannot
// compile for, --static-only, --static skip of a predicted failure, a module that failed to
// import, a result in the cache) and the others become the scheduler's tasks; their ends become
// results through interpret(), with --reduce's represented cells and the fresh reruns of cells
// a fork hazard could explain.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/check/execute.hpp"
#include "src/check/interpret.hpp"
#include "src/check/module_inspection.hpp"
#include "src/check/plan.hpp"
#include "src/run/scheduler.hpp"

namespace portcheck {

// The worker's command line: {python, "-m", "portcheck_worker"}.
std::vector<std::string> worker_argv(const ExecuteSettings& settings);

class CellRun {
 public:
  // `unsupported`: target name -> why this Triton cannot compile for it; `inspection`: what the
  // modules' inspections answered so far (a cell is served only once its module's has).
  CellRun(const std::vector<PlannedCell>& cells, std::vector<std::size_t> representative,
          const InspectionResults& inspection, const ExecuteSettings& settings,
          const Judgement& judgement, std::map<std::string, std::string> unsupported);

  // Serves every cell of `ids` it can without compiling; returns the tasks of the others.
  std::vector<Task> serve(const std::vector<std::size_t>& ids);
  // A compile's end (Scheduler::OnEnded), and whether it runs again fresh (Scheduler::Rerun).
  void ended(std::size_t id, const ProcessOutcome& outcome);
  std::optional<ProcessSpec> fresh_rerun(std::size_t id, const ProcessOutcome& outcome);
  // Once every compile has ended (or the run was interrupted): --reduce's represented cells.
  void represent();

  [[nodiscard]] Scheduler::OnProgress progress_line() const;
  std::vector<CellResult> results();
  [[nodiscard]] std::size_t from_cache() const { return from_cache_; }
  [[nodiscard]] std::size_t stored() const { return stored_; }
  [[nodiscard]] int rerun_fresh() const { return static_cast<int>(rerun_fresh_.size()); }

 private:
  [[nodiscard]] std::optional<StaticPrediction> prediction_for(std::size_t id) const;
  [[nodiscard]] std::string key_for(std::size_t id) const;
  [[nodiscard]] std::filesystem::path dir_of(std::size_t id) const;
  // What the worker's result.json must be: the answer to the cell's request kind.
  [[nodiscard]] std::string answer_kind(std::size_t id) const;
  [[nodiscard]] std::string target_key(const PlannedCell& cell) const;
  [[nodiscard]] std::string timing_key(const PlannedCell& cell) const;
  std::optional<CellInput> without_compile(std::size_t id);
  [[nodiscard]] std::optional<CellInput> without_cache(std::size_t id) const;
  void prefetch(const std::vector<std::size_t>& ids);
  [[nodiscard]] Task task_for(std::size_t id) const;
  void remember_evidence(std::size_t id, const std::optional<CellEvidence>& evidence);
  void keep(std::size_t id, CellResult result);

  const std::vector<PlannedCell>& cells_;
  const InspectionResults& inspection_;
  const ExecuteSettings& settings_;
  const Judgement& judgement_;
  std::map<std::string, std::string> unsupported_;
  // One pointer a cell until its result exists: a CellResult is about a kilobyte even empty.
  std::vector<std::unique_ptr<CellResult>> results_;
  std::size_t from_cache_ = 0;
  std::size_t stored_ = 0;
  std::size_t failed_ = 0;             // so far, for the progress line
  std::size_t kept_ = 0;               // results so far, for the progress line
  std::set<std::size_t> rerun_fresh_;  // cells run again in a fresh process (fresh_rerun)
  std::map<std::size_t, CellEvidence> read_evidence_;    // read by fresh_rerun, kept by ended()
  std::map<std::size_t, ProcessOutcome> first_attempt_;  // of each cell run again
  // --reduce: the cell that stands for each (itself when none other does), the cells that do,
  // their evidence, and the cells waiting for it.
  std::vector<std::size_t> representative_;
  std::set<std::size_t> stands_for_others_;
  std::map<std::size_t, CellEvidence> evidence_;
  std::vector<std::size_t> represented_;
};

}  // namespace portcheck
