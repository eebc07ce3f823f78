#include "src/check/execute.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "src/check/cell_run.hpp"
#include "src/check/module_inspection.hpp"
#include "src/check/triton_validation.hpp"
#include "src/check/worker_targets.hpp"
#include "src/core/errors.hpp"
#include "src/run/scheduler.hpp"
#include "util/json_reader.hpp"

namespace portcheck {
namespace {

// TRITON_PORTCHECK_BATCH_CELLS=N: batches of up to N cells whatever their compile times, 1 for
// none (one cell to a child, as before batches: a way to rule them out, and the tests' way to
// put a fault in the middle of one); unset or not a number: sized from compile times.
std::size_t batch_cells_from_environment() {
  const char* text = std::getenv("TRITON_PORTCHECK_BATCH_CELLS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const auto cells = std::strtoul(text, &end, 10);
  return end != text && *end == '\0' && cells < 1000 ? cells : 0;
}

// What every module's inspection is told: the run's targets as the probe described them, and
// whether to compute cache keys (not when nothing will be compiled or cached).
InspectionSettings inspection_settings(const ExecuteSettings& settings,
                                       const nlohmann::json& targets) {
  InspectionSettings out;
  out.python_argv = worker_argv(settings);
  out.env = settings.session.env;
  out.scratch = settings.session.run_dir;
  const bool keys = settings.cache != nullptr && settings.static_mode != StaticMode::only;
  out.common = {
      {"tool_version", PORTCHECK_VERSION}, {"targets", targets}, {"keys", keys}, {"predict", true}};
  out.jobs = settings.jobs;
  return out;
}

// The modules' inspections and the cells' compiles as one scheduler run: a module's cells start
// as soon as its own inspection has answered, on the cores the other modules' imports leave, not
// once the last module has been imported (issue 43). A row the inspection shows to be wrong for
// this Triton (an option it lacks, an argument its kernel does not take) stops new compiles; once
// every inspection has ended, validate_against_triton throws the manifest's first such error, as
// it did before any compile when compiles waited for every inspection.
class Pipeline {
 public:
  Pipeline(const Manifest& manifest, const Matrix& matrix, const OptionFields& option_fields,
           ModuleInspections& inspections, CellRun& cells)
      : manifest_(manifest),
        matrix_(matrix),
        option_fields_(option_fields),
        inspections_(inspections),
        cells_(cells) {}

  // `served_at_once`: cells no inspection answers for (on targets this Triton cannot compile for).
  bool run(ProcessRunner& runner, std::size_t jobs, const std::vector<std::size_t>& served_at_once,
           const std::atomic<bool>& interrupted, const Scheduler::OnProgress& progress) {
    valid_ = valid({}, nullptr);  // every row's options, before any compile
    Scheduler scheduler(runner, jobs);
    scheduler.batch_cells(batch_cells_from_environment());
    scheduler.rerun_when([this](ProcessRunner::Id id, const ProcessOutcome& outcome) {
      return inspections_.owns(id) ? inspections_.rerun(id, outcome)
                                   : cells_.fresh_rerun(id, outcome);
    });
    auto tasks = inspections_.tasks();
    for (auto& task : cells_.serve(served_at_once)) tasks.push_back(std::move(task));
    const auto on_ended = [&](ProcessRunner::Id id, const ProcessOutcome& outcome) {
      if (!inspections_.owns(id)) return cells_.ended(id, outcome);
      inspected(inspections_.ended(id, outcome), scheduler);
    };
    const bool completed = scheduler.run(std::move(tasks), on_ended, interrupted, progress);
    cells_.represent();
    return completed;
  }

 private:
  void inspected(const std::optional<ModuleInspections::Inspected>& module, Scheduler& scheduler) {
    if (module && valid_) valid_ = valid(inspections_.results().kernels, &module->rows);
    if (module && valid_) scheduler.add(cells_.serve(module->cells));
    if (module && valid_ && module->per_target)
      scheduler.add(inspections_.inspect_per_target(*module->per_target));
    if (valid_ || inspections_.pending() > 0) return;
    validate_against_triton(manifest_, option_fields_, inspections_.results().kernels,
                            matrix_.row_targets);
    throw std::logic_error("a row failed validation against Triton, then passed it");
  }

  [[nodiscard]] bool valid(const std::map<std::string, InspectedKernel>& kernels,
                           const std::set<std::string>* rows) const {
    try {
      validate_against_triton(manifest_, option_fields_, kernels, matrix_.row_targets, rows);
      return true;
    } catch (const UsageError&) {
      return false;
    }
  }

  const Manifest& manifest_;
  const Matrix& matrix_;
  const OptionFields& option_fields_;
  ModuleInspections& inspections_;
  CellRun& cells_;
  bool valid_ = true;
};

// Each compile takes its target's launch limits along: the worker judges the compiled kernel
// against them (python/portcheck_worker/compile/launch_rules.py, the rules' one home), and the
// limits are part of what its cache key covers.
void hand_launch_limits(std::vector<PlannedCell>& cells, const LaunchLimits& limits) {
  std::map<std::string, std::shared_ptr<const std::string>> by_target;
  for (auto& cell : cells) {
    const auto target = limits.for_target(cell.target);
    if (!target || cell.request.value("kind", "") != "compile") continue;
    auto& text = by_target[cell.target.name()];
    if (!text) text = std::make_shared<const std::string>(target->to_json().dump());
    cell.launch_limits = text;
  }
}

Judgement judgement_for(const ExecuteSettings& settings, std::string triton_version) {
  Judgement judgement;
  judgement.triton_version = std::move(triton_version);
  judgement.known = KnownFailures::load(settings.data / "known-failures.toml");
  judgement.launch_limits = LaunchLimits::load(settings.data / "launch-limits.toml");
  judgement.launch_limits_warn = settings.launch_limits_warn;
  return judgement;
}

}  // namespace

ExecutedCells execute(const Manifest& manifest, const Matrix& matrix, Plan plan,
                      const ExecuteSettings& settings, const WorkerSessionFactory& start_session,
                      const std::atomic<bool>& interrupted) {
  ExecutedCells out;
  auto& cells = plan.cells;
  auto session = start_session(settings.session);
  out.probe = session->probe(plan.probe_request);
  out.triton_version = out.probe.triton_version;
  if (const auto& why_not = out.probe.signal_guard_off)
    out.warnings.push_back(
        fmt::format("the cells' code can signal triton-portcheck here (no seccomp guard: {}); a "
                    "kernel that kills its parent may end the run",
                    *why_not));
  // With no result cache every cell that is not predicted away compiles: the warm-up can start
  // now, beside the modules' imports. With one, it waits for the first cell the cache lacks.
  if (settings.cache == nullptr && settings.static_mode != StaticMode::only && !cells.empty())
    session->prewarm();
  const auto& probed_targets = out.probe.targets;
  if (!settings.unsupported_targets_are_cells)
    validate_targets(manifest, matrix, probed_targets, out.triton_version);
  out.unsupported_targets = unsupported_targets(probed_targets);
  std::set<std::string> skipped;
  std::map<std::string, std::string> why_unsupported;
  for (const auto& [name, described] : out.unsupported_targets) {
    skipped.insert(name);
    why_unsupported[name] = target_problem(described, out.triton_version);
  }
  // Everything after the probe uses the targets it described, cache keys included.
  const auto warp_sizes = probed_warp_sizes(out.probe);
  adopt_warp_sizes(cells, warp_sizes);
  std::vector<std::string> columns;
  std::copy_if(matrix.columns.begin(), matrix.columns.end(), std::back_inserter(columns),
               [&](const std::string& c) { return skipped.count(c) == 0; });
  const auto judgement = judgement_for(settings, out.triton_version);
  hand_launch_limits(cells, judgement.launch_limits);
  for (auto& cell : cells) cell.seal();
  ModuleInspections inspections(modules_to_inspect(manifest, cells, skipped), cells,
                                inspection_settings(settings, targets_json(columns, warp_sizes)),
                                cells.size());
  CellRun run(cells, std::move(plan.representative), inspections.results(), settings, judgement,
              std::move(why_unsupported));
  std::vector<std::size_t> served_at_once;
  for (std::size_t id = 0; id < cells.size(); ++id)
    if (skipped.count(cells[id].target.name()) != 0) served_at_once.push_back(id);
  Pipeline pipeline(manifest, matrix, out.probe.option_fields, inspections, run);
  out.completed = pipeline.run(session->runner(), settings.jobs, served_at_once, interrupted,
                               run.progress_line());
  if (settings.progress) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  out.static_result = inspections.results().static_result;
  if (settings.cache != nullptr) settings.cache->flush();  // the last results' writes
  out.workers_peak_rss_bytes = session->runner().peak_tree_rss_bytes();
  out.worker_stats = session->stats();
  session.reset();  // no worker outlives the matrix
  settings.timings->save();
  // What this run wrote, compiled or fetched from a shared cache, may have passed the bound.
  if (settings.cache != nullptr &&
      (run.stored() > 0 || settings.cache->counters().bytes_fetched > 0))
    settings.cache->local().evict_to_fit();
  out.cells = run.results();
  out.from_cache = run.from_cache();
  out.worker_stats.cells_rerun_fresh += run.rerun_fresh() + inspections.results().rerun_fresh;
  return out;
}

}  // namespace portcheck
