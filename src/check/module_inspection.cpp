#include "src/check/module_inspection.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "src/check/zygote_key.hpp"
#include "src/run/cell_answer_read.hpp"
#include "src/run/scheduler.hpp"
#include "src/run/worker_channels.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

// The inspection answered: its process ended as it should and left an inspect_answer.
bool answered(const InspectionEnd& end) {
  const auto& outcome = end.evidence.outcome;
  return outcome.how == Termination::exited && outcome.exit_code == 0 && end.answer;
}

// Answered, and every kernel of the module imported: what a fresh process would say when the
// import works there.
bool answered_for_every_kernel(const InspectionEnd& end) {
  if (!answered(end)) return false;
  return std::all_of(end.answer->kernels.begin(), end.answer->kernels.end(),
                     [](const auto& kernel) { return kernel.second.ok; });
}

void merge_answer(InspectAnswer answer, InspectionResults& out) {
  for (auto& [id, kernel] : answer.kernels) out.kernels.insert_or_assign(id, std::move(kernel));
  for (auto& [id, key] : answer.keys) out.keys.insert_or_assign(id, std::move(key));
  if (!answer.static_findings) return;
  auto& found = *answer.static_findings;
  // The tables are the same Triton's in every answer: the first one's stay.
  if (!out.static_result) {
    out.static_result = std::move(found);
    return;
  }
  for (auto& [id, prediction] : found.cells)
    out.static_result->cells.insert_or_assign(id, std::move(prediction));
  out.static_result->seconds += found.seconds;
}

// Of two limits where 0 means none, the one that allows more.
template <typename Limit>
Limit most_generous(Limit a, Limit b) {
  return a == Limit{} || b == Limit{} ? Limit{} : std::max(a, b);
}

bool every_cell_has_a_target(const ModuleToInspect& module, const std::vector<PlannedCell>& cells) {
  return std::all_of(module.cell_ids.begin(), module.cell_ids.end(), [&](std::size_t id) {
    const auto request = cells[id].parsed_request();
    const auto target = request.find("target");
    return target != request.end() && target->is_object();
  });
}

// An inspection's fork_route: its zygote imports the module for no target (for its own, when it
// keys one target's cells), and the zygotes its cells compile in are named, which the server may
// start beside it.
nlohmann::json inspection_route(const ModuleToInspect& module,
                                const std::vector<PlannedCell>& cells) {
  if (module.zygote.is_null() || module.kernels.empty()) return nullptr;
  auto expects = nlohmann::json::array();
  std::set<std::string> expected;
  for (const auto id : module.cell_ids) {
    auto route = fork_route(cells[id].request_kind(), cells[id].row->ref, &cells[id].target);
    if (route.is_null() || !expected.insert(route["zygote"]["key"].get<std::string>()).second)
      continue;
    route.erase("kind");
    expects.push_back(std::move(route));
  }
  return {{"kind", "inspect"},
          {"zygote", module.zygote},
          {"kernel", module.kernels.at(0).at("kernel")},
          {"target", module.target},
          {"expects", std::move(expects)}};
}

Task inspection_task(ProcessRunner::Id id, const ModuleToInspect& module,
                     const std::vector<PlannedCell>& cells, const InspectionSettings& settings,
                     const std::filesystem::path& dir) {
  util::atomic_write_file(dir / "request.json", inspection_request(module, cells, settings));
  Task task;
  task.id = id;
  task.prerequisite = true;
  task.expected_seconds = static_cast<double>(module.cell_ids.size());
  task.spec = worker_cell_spec(settings.python_argv, settings.env, dir, module.cwd);
  task.spec.compiles = false;  // imports the module: no warm backend needed
  task.spec.timeout = module.timeout;
  task.spec.max_rss_bytes = module.max_rss_bytes;
  task.spec.route = inspection_route(module, cells);
  return task;
}

}  // namespace

std::string inspection_request(const ModuleToInspect& module, const std::vector<PlannedCell>& cells,
                               const InspectionSettings& settings) {
  nlohmann::json request = settings.common;
  request["kind"] = "inspect";
  request["zygote"] = module.zygote;
  request["kernels"] = module.kernels;
  if (!module.target.is_null()) request["target"] = module.target;
  // A placeholder the dump holds once, as this key's value: any text of the user's inside the
  // request is a string, whose quotes the dump escapes.
  constexpr std::string_view kPlaceholder = R"("portcheck:cells")";
  request["cells"] = "portcheck:cells";
  auto text = request.dump();
  std::string listed = "[";
  for (const auto id : module.cell_ids) {
    if (listed.size() > 1) listed += ',';
    listed += fmt::format(R"({{"id":{},"request":{}}})", id, cells[id].request_json());
  }
  listed += ']';
  text.replace(text.find(kPlaceholder), kPlaceholder.size(), listed);
  return text;
}

ProcessSpec worker_cell_spec(const std::vector<std::string>& python_argv,
                             const std::vector<std::string>& env, const std::filesystem::path& dir,
                             const std::filesystem::path& cwd) {
  ProcessSpec spec;
  spec.argv = python_argv;
  spec.argv.insert(spec.argv.end(),
                   {std::string(channels::kCellCommand), (dir / "request.json").string(),
                    (dir / "result.json").string(), (dir / "progress").string()});
  spec.env = env;
  spec.cwd = cwd;
  spec.stdout_path = dir / "stdout";
  spec.stderr_path = dir / "stderr";
  spec.request_path = dir / "request.json";
  spec.result_path = dir / "result.json";
  spec.progress_path = dir / "progress";
  return spec;
}

void forget_run(const std::filesystem::path& dir) {
  for (const char* name : {"result.json", "progress", "stdout", "stderr"}) {
    std::error_code ignored;
    std::filesystem::remove(dir / name, ignored);
  }
}

namespace {

// A worker's folder less its answer: how the process ended, its last stage, what it printed.
CellEvidence process_evidence(const std::filesystem::path& dir, const ProcessOutcome& outcome) {
  CellEvidence evidence;
  evidence.outcome = outcome;
  evidence.last_stage =
      last_stage_from_progress(util::read_file_bounded(dir / "progress", 1 << 16).value_or(""));
  evidence.stderr_text = util::read_file_bounded(dir / "stderr", kCellLogLimit).value_or("");
  return evidence;
}

// result.json as JSON; nullopt when there is none (the process died first) or it is not JSON.
std::optional<nlohmann::json> result_json(const std::filesystem::path& dir) {
  const auto text = util::read_file_bounded(dir / "result.json", 1 << 24);
  if (!text) return std::nullopt;
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

}  // namespace

CellEvidence evidence_from_files(const std::filesystem::path& dir, const ProcessOutcome& outcome,
                                 std::string_view answer_kind) {
  auto evidence = process_evidence(dir, outcome);
  if (const auto json = result_json(dir)) {
    auto read = try_read_cell_answer(answer_kind, *json);
    evidence.result = std::move(read.value);
    if (!evidence.result) evidence.protocol_problem = worker_breach("result", read.problem);
  }
  return evidence;
}

InspectionEnd inspection_from_files(const std::filesystem::path& dir,
                                    const ProcessOutcome& outcome) {
  InspectionEnd end{process_evidence(dir, outcome), std::nullopt};
  if (const auto json = result_json(dir)) {
    auto read = InspectAnswer::try_read(*json);
    end.answer = std::move(read.value);
    if (!end.answer) end.evidence.protocol_problem = worker_breach("result", read.problem);
  }
  return end;
}

std::vector<ModuleToInspect> modules_to_inspect(const Manifest& manifest,
                                                const std::vector<PlannedCell>& cells,
                                                const std::set<std::string>& skipped_targets) {
  std::map<std::string, std::size_t> index;
  std::vector<ModuleToInspect> modules;
  const auto module_of = [&](const KernelRow& row) -> ModuleToInspect& {
    auto where = kernel_ref_json(row.ref);
    where.erase("function");
    const auto [it, inserted] = index.emplace(where.dump(), modules.size());
    if (inserted) {
      modules.emplace_back();
      modules.back().cwd = row.ref.import_root;
      modules.back().zygote = zygote_member(row.ref, "");
    }
    return modules[it->second];
  };
  for (const auto& row : manifest.rows)
    module_of(row).kernels.push_back(
        {{"id", row.display_name()}, {"kernel", kernel_ref_json(row.ref)}});
  for (std::size_t id = 0; id < cells.size(); ++id) {
    const auto& cell = cells[id];
    if (skipped_targets.count(cell.target.name()) != 0) continue;
    auto& module = module_of(*cell.row);
    module.cell_ids.push_back(id);
    const auto timeout = std::chrono::milliseconds(static_cast<long long>(cell.timeout_s * 1000));
    const bool first = module.cell_ids.size() == 1;
    module.timeout = first ? timeout : most_generous(module.timeout, timeout);
    module.max_rss_bytes = first ? cell.max_rss : most_generous(module.max_rss_bytes, cell.max_rss);
  }
  std::erase_if(modules, [](const ModuleToInspect& m) { return m.cell_ids.empty(); });
  return modules;
}

std::optional<CellEvidence> import_failure(const InspectedKernel& kernel) {
  if (kernel.ok) return std::nullopt;
  CellEvidence evidence;
  evidence.outcome.how = Termination::exited;
  evidence.last_stage = "import";
  // The result the worker gives these cells (the protocol's inspect_answer carries it, read).
  evidence.result = kernel.failure;
  return evidence;
}

ModuleInspections::ModuleInspections(std::vector<ModuleToInspect> modules,
                                     const std::vector<PlannedCell>& cells,
                                     InspectionSettings settings, ProcessRunner::Id first_id)
    : modules_(std::move(modules)),
      cells_(cells),
      settings_(std::move(settings)),
      first_id_(first_id),
      pending_(modules_.size()) {}

std::filesystem::path ModuleInspections::dir_of(std::size_t module) const {
  return settings_.scratch / fmt::format("inspect-{}", module);
}

std::vector<Task> ModuleInspections::tasks() const {
  std::vector<Task> tasks;
  for (std::size_t i = 0; i < modules_.size(); ++i) {
    std::filesystem::create_directories(dir_of(i));
    tasks.push_back(inspection_task(first_id_ + i, modules_[i], cells_, settings_, dir_of(i)));
  }
  return tasks;
}

std::optional<ProcessSpec> ModuleInspections::rerun(ProcessRunner::Id id,
                                                    const ProcessOutcome& outcome) {
  const auto module = id - first_id_;
  if (!modules_[module].target.is_null()) return std::nullopt;  // its cells compile regardless
  if (outcome.forked_from_threads <= 1 || rerun_.count(module) != 0) return std::nullopt;
  // A timeout computing until the limit is the import's own (check/fork_hazard.hpp).
  if (outcome.how == Termination::timed_out && !outcome.stalled) return std::nullopt;
  if (answered_for_every_kernel(inspection_from_files(dir_of(module), outcome)))
    return std::nullopt;
  rerun_.insert(module);
  results_.rerun_fresh = static_cast<int>(rerun_.size());
  forget_run(dir_of(module));
  auto spec = inspection_task(id, modules_[module], cells_, settings_, dir_of(module)).spec;
  spec.fresh = true;
  return spec;
}

std::optional<ModuleInspections::Inspected> ModuleInspections::ended(
    ProcessRunner::Id id, const ProcessOutcome& outcome) {
  --pending_;
  if (outcome.how == Termination::cancelled) return std::nullopt;  // interrupted: nothing to say
  const auto module = id - first_id_;
  Inspected out;
  out.cells = modules_[module].cell_ids;
  for (const auto& row : modules_[module].kernels) out.rows.insert(row.at("id").get<std::string>());
  auto end = inspection_from_files(dir_of(module), outcome);
  const bool per_target = !modules_[module].target.is_null();
  if (answered(end)) {
    const bool asked_driver = end.answer->asked_driver;
    merge_answer(std::move(*end.answer), results_);
    if (!per_target && asked_driver && every_cell_has_a_target(modules_[module], cells_)) {
      out.per_target = module;
      out.cells.clear();
    }
  } else if (!per_target) {
    for (const auto cell : out.cells) results_.failed.emplace(cell, end.evidence);
  }
  return out;
}

std::vector<Task> ModuleInspections::inspect_per_target(std::size_t module) {
  std::map<std::string, ModuleToInspect> by_target;
  for (const auto id : modules_[module].cell_ids) {
    const auto request = cells_[id].parsed_request();
    const auto& target = request.at("target");
    auto [it, inserted] = by_target.try_emplace(target.dump(), modules_[module]);
    if (inserted) {
      it->second.cell_ids.clear();
      it->second.target = target;
      it->second.zygote = request.value("zygote", nlohmann::json());
    }
    it->second.cell_ids.push_back(id);
  }
  std::vector<Task> tasks;
  for (auto& [target, inspection] : by_target) {
    const auto index = modules_.size();
    modules_.push_back(std::move(inspection));
    std::filesystem::create_directories(dir_of(index));
    tasks.push_back(
        inspection_task(first_id_ + index, modules_[index], cells_, settings_, dir_of(index)));
    ++pending_;
  }
  return tasks;
}

}  // namespace portcheck
