#include "src/check/execute.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "src/check/cell_cache.hpp"
#include "src/check/fork_hazard.hpp"
#include "src/check/module_inspection.hpp"
#include "src/check/triton_validation.hpp"
#include "src/check/worker_targets.hpp"
#include "src/run/scheduler.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

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

double seconds_since(std::chrono::steady_clock::time_point then) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - then).count();
}

std::vector<std::string> worker_argv(const ExecuteSettings& settings) {
  return {settings.session.python, "-m", "portcheck_worker"};
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

// The cells of one environment once the probe and the inspection have answered: those that need
// no compile are served at once, the others go to the scheduler.
class CellRun {
 public:
  // `unsupported`: target name -> why this Triton cannot compile for it.
  CellRun(const std::vector<PlannedCell>& cells, std::vector<std::size_t> representative,
          const InspectionResults& inspection, const ExecuteSettings& settings,
          const Judgement& judgement, std::map<std::string, std::string> unsupported)
      : cells_(cells),
        inspection_(inspection),
        settings_(settings),
        judgement_(judgement),
        unsupported_(std::move(unsupported)),
        results_(cells.size()),
        representative_(std::move(representative)) {
    for (std::size_t id = 0; id < cells.size(); ++id)
      if (representative_[id] != id) stands_for_others_.insert(representative_[id]);
  }

  // Serves every cell it can without compiling; returns the tasks of the others.
  std::vector<Task> serve() {
    prefetch();
    std::vector<Task> tasks;
    for (std::size_t id = 0; id < cells_.size(); ++id) {
      if (auto input = without_compile(id)) {
        remember_evidence(id, input->evidence);
        keep(id, interpret(cells_[id], *input, judgement_));
      } else if (representative_[id] != id) {
        represented_.push_back(id);  // its representative's verdict, once that is known
      } else {
        tasks.push_back(task_for(id));
      }
    }
    return tasks;
  }

  bool compile(std::vector<Task> tasks, ProcessRunner& runner,
               const std::atomic<bool>& interrupted) {
    Scheduler scheduler(runner, settings_.jobs);
    scheduler.batch_cells(batch_cells_from_environment());
    const auto on_ended = [this](ProcessRunner::Id id, const ProcessOutcome& outcome) {
      ended(id, outcome);
    };
    scheduler.rerun_when([this](ProcessRunner::Id id, const ProcessOutcome& outcome) {
      return fresh_rerun(id, outcome);
    });
    const bool completed = scheduler.run(std::move(tasks), on_ended, interrupted, progress_line());
    if (settings_.progress) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
    }
    represent();
    return completed;
  }

  std::vector<CellResult> results() {
    std::vector<CellResult> out;
    for (auto& r : results_)
      if (r) out.push_back(std::move(*r));
    return out;
  }
  [[nodiscard]] std::size_t from_cache() const { return from_cache_; }
  [[nodiscard]] std::size_t stored() const { return stored_; }
  [[nodiscard]] int rerun_fresh() const { return static_cast<int>(rerun_fresh_.size()); }

 private:
  [[nodiscard]] nlohmann::json prediction_for(std::size_t id) const {
    const auto& found = inspection_.static_result;
    if (!found.is_object() || !found.contains("cells")) return nullptr;
    return found.at("cells").value(std::to_string(id), nlohmann::json());
  }

  // The cache key the inspection computed, empty when it could not.
  [[nodiscard]] std::string key_for(std::size_t id) const {
    const auto& k = inspection_.keys.value(std::to_string(id), nlohmann::json());
    return k.is_string() ? k.get<std::string>() : std::string();
  }

  [[nodiscard]] std::filesystem::path dir_of(std::size_t id) const {
    return settings_.session.run_dir / fmt::format("cell-{}", cells_[id].index);
  }

  [[nodiscard]] std::string target_key(const PlannedCell& cell) const {
    return fmt::format("{}|{}", cell.target.name(), judgement_.triton_version);
  }
  [[nodiscard]] std::string timing_key(const PlannedCell& cell) const {
    return fmt::format("{}|{}", cell.row->display_name(), target_key(cell));
  }

  // Not compiled: served without the cache (below), or found in the cache under limits that this
  // run's would not have cut short.
  std::optional<CellInput> without_compile(std::size_t id) {
    if (auto input = without_cache(id)) return input;
    const auto& cell = cells_[id];
    const auto key = key_for(id);
    if (settings_.cache == nullptr || key.empty()) return std::nullopt;
    const auto entry = settings_.cache->load(key, cell.timeout_s, cell.max_rss);
    if (!entry) return std::nullopt;
    ++from_cache_;
    return CellInput{
        evidence_from_cache(*entry, cell.row->ref.import_root), prediction_for(id), true, {}};
  }

  // The cells whose verdict needs neither a compile nor the cache: a target this Triton cannot
  // compile for, --static-only or a predicted failure under --static skip, a module that failed
  // to import (crashed, hung or blew the memory limit: that is its evidence).
  [[nodiscard]] std::optional<CellInput> without_cache(std::size_t id) const {
    if (const auto why = unsupported_.find(cells_[id].target.name()); why != unsupported_.end())
      return CellInput{std::nullopt, nullptr, false, why->second};
    auto predicted = prediction_for(id);
    // Before --static-only: the inspection imported the module, and a module that cannot be
    // imported fails its cells whether or not they would be compiled (the pre-commit hook runs
    // --static-only; it must not pass a ModuleNotFoundError).
    if (const auto fault = inspection_.failed.find(id); fault != inspection_.failed.end())
      return CellInput{fault->second, std::move(predicted), false, {}};
    if (settings_.static_mode == StaticMode::only ||
        (settings_.static_mode == StaticMode::skip && predicted.is_object())) {
      const auto row = inspection_.kernels.find(cells_[id].row->display_name());
      auto raised = row != inspection_.kernels.end() ? import_failure(*row) : std::nullopt;
      return CellInput{std::move(raised), std::move(predicted), false, {}};
    }
    return std::nullopt;
  }

  // One request to a shared cache for every cell that would look there, rather than one per
  // cell: a remote a few milliseconds away costs one round trip, not hundreds.
  void prefetch() {
    if (settings_.cache == nullptr) return;
    std::vector<std::string> keys;
    for (std::size_t id = 0; id < cells_.size(); ++id)
      if (!without_cache(id)) keys.push_back(key_for(id));
    settings_.cache->prefetch(keys);
  }

  Task task_for(std::size_t id) const {
    const auto& cell = cells_[id];
    const auto dir = dir_of(id);
    std::filesystem::create_directories(dir);
    util::atomic_write_file(dir / "request.json", cell.request.dump());
    Task task;
    task.id = id;
    // This row's own history, else every row's on this target, else the manifest's estimate.
    const auto& timings = *settings_.timings;
    auto expected = timings.get(timing_key(cell));
    if (!expected) expected = timings.mean_of_suffix(target_key(cell));
    task.expected_seconds = expected.value_or(cell.expected_s);
    task.measured = expected.has_value();
    task.spec = worker_cell_spec(worker_argv(settings_), settings_.session.env, dir,
                                 cell.row->ref.import_root);
    task.spec.timeout = std::chrono::milliseconds(static_cast<long long>(cell.timeout_s * 1000));
    task.spec.max_rss_bytes = cell.max_rss;
    task.group = zygote_group(cell);
    // Cells of one kernel module share a batch's process (the module imported once, as its
    // zygote would): never a reproducer's, which is one cell.
    if (cell.request.value("repro", nlohmann::json()).is_null())
      task.batch = task.group + "|" + cell.row->ref.module + "|" + cell.row->ref.file.string();
    return task;
  }

  // The cells one zygote of the fork server serves: a target and a top-level package or file, or
  // the folder of kernels `capture` saved (python/portcheck_worker/serve/zygote.py keys its zygotes
  // so).
  static std::string zygote_group(const PlannedCell& cell) {
    const auto& ref = cell.row->ref;
    std::string unit = ref.module.substr(0, ref.module.find('.'));
    if (!ref.file.empty())
      unit = ref.file.parent_path().filename() == kGeneratedFolder ? ref.file.parent_path().string()
                                                                   : ref.file.string();
    std::string folders = ref.import_root.string();
    for (const auto& folder : ref.python_path) folders += ":" + folder.string();
    return fmt::format("{}|{}|{}", cell.target.name(), folders, unit);
  }

  // A cell forked from a process with threads that failed in a way a fork hazard could explain
  // is run again, forked from the bare fork server, and that verdict is the one reported.
  std::optional<ProcessSpec> fresh_rerun(std::size_t id, const ProcessOutcome& outcome) {
    if (outcome.forked_from_threads <= 1 || rerun_fresh_.count(id) != 0) return std::nullopt;
    auto evidence = evidence_from_files(dir_of(id), outcome);
    if (!fork_hazard_could_explain(classify(evidence), outcome)) {
      read_evidence_.insert_or_assign(id, std::move(evidence));  // ended() needs it next
      return std::nullopt;
    }
    rerun_fresh_.insert(id);
    first_attempt_.insert_or_assign(id, outcome);  // its time is the cell's too
    forget_run(dir_of(id));
    auto spec = task_for(id).spec;
    spec.fresh = true;
    return spec;
  }

  void ended(std::size_t id, const ProcessOutcome& outcome) {
    if (outcome.how == Termination::cancelled) return;  // never finished: not a result
    const auto& cell = cells_[id];
    auto read = read_evidence_.extract(id);
    CellInput input{read ? std::move(read.mapped()) : evidence_from_files(dir_of(id), outcome),
                    prediction_for(id),
                    false,
                    {}};
    remember_evidence(id, input.evidence);
    keep(id, interpret(cell, input, judgement_));
    auto& result = *results_[id];
    result.rerun_fresh = rerun_fresh_.count(id) != 0;
    result.started_s = std::max(0.0, seconds_since(settings_.started) - outcome.wall_seconds);
    if (const auto first = first_attempt_.find(id); first != first_attempt_.end()) {
      result.first_attempt_s = first->second.wall_seconds;
      result.wall_s += first->second.wall_seconds;
      result.waited_s += first->second.waited_seconds;
    }
    settings_.timings->set(timing_key(cell), result.wall_s);
    const auto key = key_for(id);
    if (settings_.cache != nullptr && !key.empty() && cacheable(*input.evidence, *results_[id])) {
      settings_.cache->store(key, cache_entry(key, *input.evidence, cell.row->ref.import_root));
      ++stored_;
    }
  }

  void remember_evidence(std::size_t id, const std::optional<CellEvidence>& evidence) {
    if (evidence && stands_for_others_.count(id) != 0) evidence_.emplace(id, *evidence);
  }

  // --reduce: each represented cell takes its representative's evidence, judged as its own row
  // (its xfail list, its launch limits); one whose representative never ended (an interrupted
  // run) stays unfinished.
  void represent() {
    for (const auto id : represented_) {
      const auto rep = representative_[id];
      const auto evidence = evidence_.find(rep);
      if (evidence == evidence_.end()) continue;
      auto result = interpret(
          cells_[id], CellInput{evidence->second, prediction_for(id), false, {}}, judgement_);
      result.represented_by = cells_[rep].row->display_name();
      result.compile_s = 0;  // nothing was compiled for it: the floor and slowest cell say so
      result.wall_s = 0;
      result.stages = nlohmann::json::object();
      keep(id, std::move(result));
    }
  }

  void keep(std::size_t id, CellResult result) {
    failed_ += result.failed_outcome() ? 1 : 0;
    results_[id] = std::move(result);
  }

  [[nodiscard]] Scheduler::OnProgress progress_line() const {
    if (!settings_.progress) return {};
    return [this](const Progress& p) {
      const double elapsed = seconds_since(settings_.started);
      const auto served = cells_.size() - p.total;  // from the cache, or needing no compile
      std::string line =
          fmt::format("[{}/{}] {} failed · {} running · {}", p.done + served, cells_.size(),
                      failed_, p.running, util::format_duration(elapsed));
      if (p.eta_s) line += " · ETA " + util::format_duration(*p.eta_s);
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
    };
  }

  const std::vector<PlannedCell>& cells_;
  const InspectionResults& inspection_;
  const ExecuteSettings& settings_;
  const Judgement& judgement_;
  std::map<std::string, std::string> unsupported_;
  std::vector<std::optional<CellResult>> results_;
  std::size_t from_cache_ = 0;
  std::size_t stored_ = 0;
  std::size_t failed_ = 0;             // so far, for the progress line
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
  out.triton_version = out.probe.at("triton").at("version").get<std::string>();
  if (const auto why_not = util::string_member(out.probe, "signal_guard_off", ""); !why_not.empty())
    std::fprintf(stderr,
                 "triton-portcheck: warning: the cells' code can signal triton-portcheck here (no "
                 "seccomp guard: %s); a kernel that kills its parent may end the run\n",
                 why_not.c_str());
  // With no result cache every cell that is not predicted away compiles: the warm-up can start
  // now, beside the modules' imports. With one, it waits for the first cell the cache lacks.
  if (settings.cache == nullptr && settings.static_mode != StaticMode::only && !cells.empty())
    session->prewarm();
  const auto& probed_targets = out.probe.value("targets", nlohmann::json::array());
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
  const auto inspection =
      inspect_modules(modules_to_inspect(manifest, cells, skipped),
                      inspection_settings(settings, targets_json(columns, warp_sizes)),
                      session->runner(), interrupted);
  validate_against_triton(manifest, out.probe.at("option_fields"), inspection.kernels,
                          matrix.row_targets);
  out.static_result = inspection.static_result;
  const auto judgement = judgement_for(settings, out.triton_version);

  CellRun run(cells, std::move(plan.representative), inspection, settings, judgement,
              std::move(why_unsupported));
  auto tasks = run.serve();
  out.completed = run.compile(std::move(tasks), session->runner(), interrupted);
  if (settings.cache != nullptr) settings.cache->flush();  // the last results' batch
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
  out.worker_stats.cells_rerun_fresh += run.rerun_fresh() + inspection.rerun_fresh;
  return out;
}

}  // namespace portcheck
