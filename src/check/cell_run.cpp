#include "src/check/cell_run.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "src/check/cell_cache.hpp"
#include "src/check/fork_hazard.hpp"
#include "src/check/worker_targets.hpp"
#include "src/check/zygote_key.hpp"
#include "src/run/worker_channels.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

double seconds_since(std::chrono::steady_clock::time_point then) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - then).count();
}

}  // namespace

std::vector<std::string> worker_argv(const ExecuteSettings& settings) {
  return {settings.session.python, "-m", std::string(channels::kWorkerModule)};
}

CellRun::CellRun(const std::vector<PlannedCell>& cells, std::vector<std::size_t> representative,
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

std::vector<Task> CellRun::serve(const std::vector<std::size_t>& ids) {
  prefetch(ids);
  std::vector<Task> tasks;
  for (const auto id : ids) {
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

std::vector<CellResult> CellRun::results() {
  std::vector<CellResult> out;
  out.reserve(results_.size());
  for (auto& r : results_) {
    if (r) out.push_back(std::move(*r));
    r.reset();
  }
  return out;
}

std::optional<StaticPrediction> CellRun::prediction_for(std::size_t id) const {
  const auto& found = inspection_.static_result;
  if (!found) return std::nullopt;
  const auto it = found->cells.find(std::to_string(id));
  return it != found->cells.end() ? it->second : std::nullopt;
}

// The cache key the inspection computed, empty when it could not.
std::string CellRun::key_for(std::size_t id) const {
  const auto it = inspection_.keys.find(std::to_string(id));
  return it != inspection_.keys.end() ? it->second.value_or("") : std::string();
}

std::filesystem::path CellRun::dir_of(std::size_t id) const {
  return settings_.session.run_dir / fmt::format("cell-{}", cells_[id].index);
}

std::string CellRun::answer_kind(std::size_t id) const {
  return answer_to(cells_[id].request_kind());
}

std::string CellRun::target_key(const PlannedCell& cell) const {
  return fmt::format("{}|{}", cell.target.name(), judgement_.triton_version);
}

std::string CellRun::timing_key(const PlannedCell& cell) const {
  return fmt::format("{}|{}", cell.row->display_name(), target_key(cell));
}

// Not compiled: served without the cache (below), or found in the cache under limits that this
// run's would not have cut short.
std::optional<CellInput> CellRun::without_compile(std::size_t id) {
  if (auto input = without_cache(id)) return input;
  const auto& cell = cells_[id];
  const auto key = key_for(id);
  if (settings_.cache == nullptr || key.empty()) return std::nullopt;
  const auto entry = settings_.cache->load(key, cell.timeout_s, cell.max_rss);
  if (!entry) return std::nullopt;
  auto evidence = evidence_from_cache(*entry, cell.row->ref.import_root);
  if (!evidence) return std::nullopt;
  ++from_cache_;
  return CellInput{std::move(evidence), prediction_for(id), true, {}};
}

// The cells whose verdict needs neither a compile nor the cache: a target this Triton cannot
// compile for, --static-only or a predicted failure under --static skip, a module that failed
// to import (crashed, hung or blew the memory limit: that is its evidence).
std::optional<CellInput> CellRun::without_cache(std::size_t id) const {
  if (const auto why = unsupported_.find(cells_[id].target.name()); why != unsupported_.end())
    return CellInput{std::nullopt, std::nullopt, false, why->second};
  auto predicted = prediction_for(id);
  // Before --static-only: the inspection imported the module, and a module that cannot be
  // imported fails its cells whether or not they would be compiled (the pre-commit hook runs
  // --static-only; it must not pass a ModuleNotFoundError).
  if (const auto fault = inspection_.failed.find(id); fault != inspection_.failed.end())
    return CellInput{fault->second, std::move(predicted), false, {}};
  if (settings_.static_mode == StaticMode::only ||
      (settings_.static_mode == StaticMode::skip && predicted)) {
    const auto row = inspection_.kernels.find(cells_[id].row->display_name());
    auto raised = row != inspection_.kernels.end() ? import_failure(row->second) : std::nullopt;
    return CellInput{std::move(raised), std::move(predicted), false, {}};
  }
  return std::nullopt;
}

// One request to a shared cache for every cell of a module that would look there, rather than
// one per cell: a remote a few milliseconds away costs one round trip, not hundreds.
void CellRun::prefetch(const std::vector<std::size_t>& ids) {
  if (settings_.cache == nullptr) return;
  std::vector<std::string> keys;
  for (const auto id : ids)
    if (!without_cache(id)) keys.push_back(key_for(id));
  settings_.cache->prefetch(keys);
}

Task CellRun::task_for(std::size_t id) const {
  const auto& cell = cells_[id];
  const auto dir = dir_of(id);
  std::filesystem::create_directories(dir);
  util::atomic_write_file(dir / "request.json", cell.request_json());
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
  task.spec.route = fork_route(cell.request_kind(), cell.row->ref, &cell.target);
  // The cells one zygote serves run together, and a batch never spans two zygotes.
  task.group = zygote_key(cell.row->ref, cell.target.name());
  // Cells of one kernel module share a batch's process (the module imported once, as its
  // zygote would): never a reproducer's, which is one cell. Only cells of the same limits: a
  // cell of a batch may take an earlier cell's backend outcome (compile/shared_backend.py),
  // which is its own only where its limits are the ones that outcome was reached under.
  if (cell.request_kind() != "repro")
    task.batch_key = fmt::format("{}|{}|{}|{}|{}", task.group, cell.row->ref.module,
                                 cell.row->ref.file.string(), cell.timeout_s, cell.max_rss);
  return task;
}

// A cell forked from a process with threads that failed in a way a fork hazard could explain
// is run again, forked from the bare fork server, and that verdict is the one reported.
std::optional<ProcessSpec> CellRun::fresh_rerun(std::size_t id, const ProcessOutcome& outcome) {
  if (outcome.forked_from_threads == 0 || rerun_fresh_.count(id) != 0) return std::nullopt;
  // A forked cell's memory holds what its zygote holds (other targets' warm-ups, pages the
  // zygote collapsed into huge ones: base/huge_pages.py), which a fresh process would not: its
  // memory limit's verdict is a fresh process's, whatever the threads.
  const bool memory = outcome.how == Termination::out_of_memory;
  if (outcome.forked_from_threads <= 1 && !memory) return std::nullopt;
  auto evidence = evidence_from_files(dir_of(id), outcome, answer_kind(id));
  if (!memory && !fork_hazard_could_explain(classify(evidence), outcome)) {
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

void CellRun::ended(std::size_t id, const ProcessOutcome& outcome) {
  if (outcome.how == Termination::cancelled) return;  // never finished: not a result
  const auto& cell = cells_[id];
  auto read = read_evidence_.extract(id);
  CellInput input{
      read ? std::move(read.mapped()) : evidence_from_files(dir_of(id), outcome, answer_kind(id)),
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

void CellRun::remember_evidence(std::size_t id, const std::optional<CellEvidence>& evidence) {
  if (evidence && stands_for_others_.count(id) != 0) evidence_.emplace(id, *evidence);
}

// --reduce: each represented cell takes its representative's evidence, judged as its own row
// (its xfail list, its launch limits); one whose representative never ended (an interrupted
// run) stays unfinished.
void CellRun::represent() {
  for (const auto id : represented_) {
    const auto rep = representative_[id];
    const auto evidence = evidence_.find(rep);
    if (evidence == evidence_.end()) continue;
    auto result = interpret(cells_[id], CellInput{evidence->second, prediction_for(id), false, {}},
                            judgement_);
    result.represented_by = cells_[rep].row->display_name();
    result.compile_s = 0;  // nothing was compiled for it: the floor and slowest cell say so
    result.wall_s = 0;
    result.stages = nlohmann::json::object();
    keep(id, std::move(result));
  }
  represented_.clear();
}

void CellRun::keep(std::size_t id, CellResult result) {
  failed_ += result.failed_outcome() ? 1 : 0;
  kept_ += results_[id] ? 0 : 1;
  results_[id] = std::make_unique<CellResult>(std::move(result));
}

Scheduler::OnProgress CellRun::progress_line() const {
  if (!settings_.progress) return {};
  return [this](const Progress& p) {
    const double elapsed = seconds_since(settings_.started);
    std::string line = fmt::format("[{}/{}] {} failed · {} running · {}", kept_, cells_.size(),
                                   failed_, p.running, util::format_duration(elapsed));
    if (p.eta_s) line += " · ETA " + util::format_duration(*p.eta_s);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
  };
}

}  // namespace portcheck
