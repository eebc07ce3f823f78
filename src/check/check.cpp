#include "src/check/check.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "src/check/classify.hpp"
#include "src/check/known_failures.hpp"
#include "src/check/launch_limits.hpp"
#include "src/check/module_inspection.hpp"
#include "src/core/cell_folders.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/core/shard.hpp"
#include "src/run/fork_server.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/result_cache.hpp"
#include "src/run/scheduler.hpp"
#include "src/run/supervisor.hpp"
#include "src/versions/environments.hpp"
#include "util/fs.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

constexpr std::size_t kLogLimit = 16000;

std::string suggestion(const std::string& word, const std::set<std::string>& candidates) {
  const auto best = util::closest_match(word, {candidates.begin(), candidates.end()});
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

std::string iso_time_utc(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

nlohmann::json kernel_ref_json(const KernelRef& ref) {
  nlohmann::json j;
  if (!ref.file.empty())
    j["file"] = ref.file.string();
  else
    j["module"] = ref.module;
  j["function"] = ref.function;
  j["import_root"] = ref.import_root.string();
  if (!ref.python_path.empty()) {
    j["pythonpath"] = nlohmann::json::array();
    for (const auto& folder : ref.python_path) j["pythonpath"].push_back(folder.string());
  }
  return j;
}

std::string row_key(const KernelRow& row, const std::string& key) {
  return fmt::format("kernel '{}'.{}", row.display_name(), key);
}

// Option names and kernel arguments can only be checked against the installed Triton.
void validate_against_triton(const Manifest& manifest, const nlohmann::json& probe,
                             const std::map<std::string, std::vector<std::string>>& row_targets) {
  const auto& fields = probe.at("option_fields");
  const auto& kernels = probe.at("kernels");
  for (const auto& row : manifest.rows) {
    std::set<std::string> valid, all;
    for (const auto& [backend, names] : fields.items())
      for (const auto& n : names) all.insert(n.get<std::string>());
    for (const auto& t : row_targets.at(row.display_name())) {
      const auto backend = t.substr(0, t.find(':'));
      if (fields.contains(backend))
        for (const auto& n : fields.at(backend)) valid.insert(n.get<std::string>());
    }
    for (const auto& [name, value] : row.options.items()) {
      if (valid.count(name) != 0) continue;
      const auto key = "options." + name;
      const auto where = row.location_of(key).describe(row_key(row, key));
      if (all.count(name) != 0)
        throw UsageError(
            fmt::format("{}: '{}' is an option of another backend than the targets this row "
                        "is checked on; Triton would drop it silently",
                        where, name));
      throw UsageError(
          fmt::format("{}: unknown compile option '{}'{}: Triton would drop it silently", where,
                      name, suggestion(name, valid)));
    }
    if (row.specialization) continue;
    // A module whose import failed (or was never reached) is reported through its cells.
    if (!kernels.contains(row.display_name())) continue;
    const auto& info = kernels.at(row.display_name());
    if (!info.at("ok").get<bool>()) continue;  // reported per cell as an import-error
    std::vector<std::string> args = info.at("args").get<std::vector<std::string>>();
    std::set<std::string> arg_set(args.begin(), args.end());
    std::set<std::string> constexprs;
    for (const auto& c : info.at("constexprs")) constexprs.insert(c.get<std::string>());
    const auto arg_list = util::join(args, ", ");
    for (const auto& field_name : {"signature", "constants"}) {
      const auto& table = std::string(field_name) == "signature" ? row.signature : row.constants;
      for (const auto& [name, value] : table.items()) {
        const auto key = std::string(field_name) + "." + name;
        if (arg_set.count(name) == 0)
          throw UsageError(fmt::format("{}: {} has no argument '{}' (its arguments: {})",
                                       row.location_of(key).describe(row_key(row, key)),
                                       row.ref.function, name, arg_list));
        if (std::string(field_name) == "signature" && constexprs.count(name) != 0)
          throw UsageError(fmt::format("{}: '{}' is a tl.constexpr: give its value in constants",
                                       row.location_of(key).describe(row_key(row, key)), name));
      }
    }
    for (const auto& arg : args)
      if (!row.signature.contains(arg) && !row.constants.contains(arg))
        throw UsageError(
            fmt::format("{}: argument '{}' of {} has no type in signature and no value in "
                        "constants",
                        row.location_of("signature").describe(row_key(row, "signature")), arg,
                        row.ref.function));
  }
}

double expected_seconds(const KernelRow& row, const Target& target) {
  // Bigger tiles and deeper pipelines compile longer; AMD's pipeline is the slower one here.
  double product = 1;
  for (const auto& [name, value] : row.constants.items())
    if (value.is_number_integer() && value.get<long long>() > 1)
      product *= static_cast<double>(value.get<long long>());
  const double stages = row.options.contains("num_stages") && row.options["num_stages"].is_number()
                            ? row.options["num_stages"].get<double>()
                            : 3.0;
  return (1.0 + std::log2(product) / 8.0) * (1.0 + stages / 6.0) *
         (target.backend == "hip" ? 1.2 : 1.0);
}

// The invoking interpreter's site-packages, which version environments fall back to.
std::vector<std::string> site_packages_of(const std::string& python, const ShareDirs& share) {
  util::TempDir scratch("triton-portcheck-site");
  try {
    const auto probe =
        probe_environment(python, share, scratch.path(), nlohmann::json{{"keys", false}});
    return probe.value("site_packages", std::vector<std::string>{});
  } catch (const EnvironmentError&) {
    return {};  // no usable invoking interpreter: nothing to inherit
  }
}

struct PlannedCell {
  const KernelRow* row;
  Target target;
  std::filesystem::path dir;
  nlohmann::json request;
  double timeout_s;
  std::uint64_t max_rss;
  std::string key;    // result-cache key, empty when the worker could not compute one
  std::string label;  // the Triton environment: "current" or a version
};

// What a cache entry keeps of a cell: enough to classify it again exactly as the first time.
nlohmann::json cache_entry(const std::string& key, const CellEvidence& evidence,
                           const std::filesystem::path& origin) {
  return {{"key", key},
          {"origin", origin.string()},
          {"result", *evidence.result},
          {"stderr", evidence.stderr_text},
          {"last_stage", evidence.last_stage},
          {"wall_s", evidence.outcome.wall_seconds},
          {"peak_rss_bytes", evidence.outcome.peak_rss_bytes}};
}

// The same kernel checked out elsewhere (another CI runner, a moved project) has the same key;
// paths in its cached messages are moved to where the kernel lives now.
nlohmann::json rebased(const nlohmann::json& entry, const std::filesystem::path& origin) {
  const auto old_origin = entry.value("origin", "");
  if (old_origin.empty() || old_origin == origin.string()) return entry;
  std::string text = entry.dump();
  const auto from = nlohmann::json(old_origin).dump();  // escaped as it appears in JSON
  const auto to = nlohmann::json(origin.string()).dump();
  const auto inner_from = from.substr(1, from.size() - 2);
  const auto inner_to = to.substr(1, to.size() - 2);
  for (std::size_t pos = 0; (pos = text.find(inner_from, pos)) != std::string::npos;
       pos += inner_to.size())
    text.replace(pos, inner_from.size(), inner_to);
  return nlohmann::json::parse(text);
}

// Of two limits where 0 means none, the one that allows more.
template <typename Limit>
Limit most_generous(Limit a, Limit b) {
  return a == Limit{} || b == Limit{} ? Limit{} : std::max(a, b);
}

// One inspection per user module (and import path), serving every row defined in it.
std::vector<ModuleToInspect> modules_to_inspect(const Manifest& manifest,
                                                const std::vector<PlannedCell>& plans) {
  std::map<std::string, std::size_t> index;
  std::vector<ModuleToInspect> modules;
  const auto module_of = [&](const KernelRow& row) -> ModuleToInspect& {
    auto where = kernel_ref_json(row.ref);
    where.erase("function");
    const auto [it, inserted] = index.emplace(where.dump(), modules.size());
    if (inserted) {
      modules.emplace_back();
      modules.back().cwd = row.ref.import_root;
    }
    return modules[it->second];
  };
  for (const auto& row : manifest.rows)
    module_of(row).kernels.push_back(
        {{"id", row.display_name()}, {"kernel", kernel_ref_json(row.ref)}});
  for (std::size_t id = 0; id < plans.size(); ++id) {
    const auto& plan = plans[id];
    auto& module = module_of(*plan.row);
    module.cells.push_back({{"id", id}, {"request", plan.request}});
    const auto timeout = std::chrono::milliseconds(static_cast<long long>(plan.timeout_s * 1000));
    const bool first = module.cells.size() == 1;
    module.timeout = first ? timeout : most_generous(module.timeout, timeout);
    module.max_rss_bytes = first ? plan.max_rss : most_generous(module.max_rss_bytes, plan.max_rss);
  }
  // A module with no cell in this run (another shard's) is left to the run that compiles it.
  std::erase_if(modules, [](const ModuleToInspect& m) { return m.cells.empty(); });
  return modules;
}

// What every module's inspection is told: the run's targets, and whether to compute cache keys.
InspectionSettings inspection_settings(const std::string& python,
                                       const std::vector<std::string>& env,
                                       const std::filesystem::path& scratch,
                                       const nlohmann::json& targets, bool keys, std::size_t jobs) {
  InspectionSettings settings;
  settings.python_argv = {python, "-m", "portcheck_worker"};
  settings.env = env;
  settings.scratch = scratch;
  settings.common = {
      {"tool_version", PORTCHECK_VERSION}, {"targets", targets}, {"keys", keys}, {"predict", true}};
  settings.jobs = jobs;
  return settings;
}

CellEvidence evidence_from_cache(const nlohmann::json& entry) {
  CellEvidence evidence;
  evidence.outcome.how = Termination::exited;
  evidence.outcome.wall_seconds = entry.value("wall_s", 0.0);
  evidence.result = entry.at("result");
  evidence.stderr_text = entry.value("stderr", "");
  evidence.last_stage = entry.value("last_stage", "");
  return evidence;
}

// Timeouts, crashes and memory kills depend on the machine and the moment; internal errors are
// ours. Only a worker's own verdict on the compile is worth keeping.
bool cacheable(const CellEvidence& evidence, const CellResult& cell) {
  return evidence.outcome.how == Termination::exited && evidence.outcome.exit_code == 0 &&
         evidence.result.has_value() && cell.kind != FailureKind::internal_error &&
         cell.kind != FailureKind::timeout && cell.kind != FailureKind::crash &&
         cell.kind != FailureKind::oom;
}

CellResult interpret(const PlannedCell& plan, const CellEvidence& evidence,
                     const std::string& triton_version, const KnownFailures& known) {
  const auto c = classify(evidence);
  CellResult cell;
  const auto& row = *plan.row;
  cell.kernel = row.display_name();
  cell.base_kernel = row.kernel;
  cell.variant = row.variant;
  cell.target = plan.target.name();
  cell.triton = plan.label;
  cell.triton_version = triton_version;
  cell.kind = c.kind;
  cell.stage = c.stage;
  cell.pass = c.pass;
  cell.message = c.message;
  cell.fingerprint = c.fingerprint;
  cell.error_source = c.error_source;
  cell.wall_s = evidence.outcome.wall_seconds;
  cell.expected_failure =
      std::find(row.xfail.begin(), row.xfail.end(), cell.target) != row.xfail.end();
  const bool failed = c.kind != FailureKind::none;
  cell.status = failed ? (cell.expected_failure ? Status::xfail : Status::failed)
                       : (cell.expected_failure ? Status::xpass : Status::ok);
  cell.is_new = cell.status == Status::failed;
  if (evidence.result) {
    const auto& r = *evidence.result;
    if (r.contains("stages") && r["stages"].is_object()) cell.stages = r["stages"];
    double sum = 0;
    for (const auto& [k, v] : cell.stages.items()) sum += v.get<double>();
    cell.compile_s = r.contains("compile_s") ? r["compile_s"].get<double>() : sum;
    if (r.contains("metadata")) cell.metadata = r["metadata"];
    if (r.contains("sizes")) cell.sizes = r["sizes"];
    if (r.contains("resources")) cell.resources = r["resources"];
    if (r.contains("export") && r["export"].is_object()) cell.exported = r["export"];
    if (r.contains("source") && r["source"].is_object())
      cell.kernel_source =
          SourceLocation{r["source"].value("file", ""), r["source"].value("line", 0)};
  }
  if (failed) {
    std::string log;
    if (evidence.result && evidence.result->contains("error"))
      log = (*evidence.result)["error"].value("traceback", "");
    if (!evidence.stderr_text.empty())
      log += (log.empty() ? "" : "\n--- stderr ---\n") + evidence.stderr_text;
    cell.log = log.size() > kLogLimit ? log.substr(log.size() - kLogLimit) : log;
    if (const auto* k = known.find(cell.fingerprint)) {
      cell.why = k->why;
      cell.link = k->link;
    }
  }
  return cell;
}

nlohmann::json target_json(const Target& t) {
  return {{"backend", t.backend}, {"arch", t.arch}, {"warp_size", t.warp_size}};
}

std::uint64_t own_peak_rss_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace

// One Triton environment's share of the matrix: its own worker, its own probe, its cells.
Report run_environment(const CheckOptions& options, const ShareDirs& share,
                       const Manifest& manifest, const std::vector<std::string>& target_names,
                       const std::vector<std::string>& columns,
                       std::map<std::string, std::vector<std::string>> row_targets,
                       const std::string& label, const std::string& python,
                       const std::vector<std::string>& inherit_site,
                       const std::atomic<bool>& interrupted) {
  const auto started = std::chrono::steady_clock::now();
  const auto started_wall = std::chrono::system_clock::now();
  util::TempDir run_dir("triton-portcheck");
  auto env = worker_environment(share, run_dir.path() / "triton-cache");
  if (!inherit_site.empty())
    env.push_back("PORTCHECK_INHERIT_SITE=" + util::join(inherit_site, ":"));
  // Every process of this run carries the marker, so that if we are killed (SIGKILL, OOM killer)
  // the watcher can still find and end them, and remove the run's folder.
  const auto run_marker =
      fmt::format("TRITON_PORTCHECK_RUN={}", run_dir.path().filename().string());
  env.push_back(run_marker);
  const util::DeathWatch death_watch(run_marker, {run_dir.path()});

  // Every cell's request, written before anything runs: the probe hashes them for the cache.
  std::vector<PlannedCell> plans;
  for (const auto& row : manifest.rows) {
    for (const auto& name : row_targets[row.display_name()]) {
      const Target target = *parse_target(name);
      const auto dir = run_dir.path() / fmt::format("cell-{}", plans.size());
      std::filesystem::create_directories(dir);
      nlohmann::json request;
      request["kernel"] = kernel_ref_json(row.ref);
      request["row_name"] = row.display_name();
      request["signature"] = row.signature;
      request["constants"] = row.constants;
      request["options"] = row.options;
      if (row.specialization)
        request["specialization"] = nlohmann::json::parse(*row.specialization);
      request["target"] = target_json(target);
      if (options.save_ir_dir)
        request["save_ir_dir"] = std::filesystem::absolute(*options.save_ir_dir / label /
                                                           ir_row_folder(row.display_name()) /
                                                           ir_target_folder(target.name()))
                                     .string();
      if (options.export_dir) {
        request["export_dir"] =
            std::filesystem::absolute(*options.export_dir / ir_row_folder(row.display_name()) /
                                      ir_target_folder(target.name()))
                .string();
      }
      const double timeout_s =
          options.timeout_s.value_or(row.timeout_s.value_or(manifest.timeout_s));
      const auto max_rss =
          options.max_rss_bytes.value_or(row.max_rss_bytes.value_or(manifest.max_rss_bytes));
      plans.push_back({&row, target, dir, std::move(request), timeout_s, max_rss, "", label});
    }
  }

  // The matrix's identity, for merging shard reports: the manifest's text, the columns and rows.
  const auto manifest_digest =
      util::sha1_hex(fmt::format("{}\n{}\n{}", util::read_file(manifest.file),
                                 util::join(columns, ","), util::join(target_names, ",")))
          .substr(0, 16);
  if (options.shard) {
    // Costs from the manifest alone (never local timings), so every runner draws the same parts.
    std::vector<double> costs;
    std::vector<std::string> keys;
    for (const auto& plan : plans) {
      costs.push_back(expected_seconds(*plan.row, plan.target));
      keys.push_back(plan.row->display_name() + "|" + plan.target.name());
    }
    std::vector<PlannedCell> mine;
    for (const auto index : select_shard(costs, keys, *options.shard))
      mine.push_back(std::move(plans[index]));
    plans = std::move(mine);
  }

  nlohmann::json probe_request;
  probe_request["tool_version"] = PORTCHECK_VERSION;
  probe_request["targets"] = nlohmann::json::array();
  for (const auto& n : columns) probe_request["targets"].push_back(target_json(*parse_target(n)));

  // Backends the run compiles for, one target each, for the fork server's warm-up.
  nlohmann::json warm_targets = nlohmann::json::array();
  std::set<std::string> warm_backends;
  for (const auto& n : columns) {
    const auto t = *parse_target(n);
    if (warm_backends.insert(t.backend).second) warm_targets.push_back(target_json(t));
  }

  std::unique_ptr<ProcessRunner> runner;
  ForkServerRunner* fork_runner = nullptr;
  nlohmann::json probe;
  if (options.isolation == Isolation::fork) {
    ForkServerConfig config;
    config.argv = {python, "-m", "portcheck_worker", "serve"};
    config.env = env;
    config.cwd = std::filesystem::current_path();
    config.log_dir = run_dir.path();
    config.warm_targets = warm_targets;
    config.max_server_rss_bytes = options.worker_max_rss_bytes;
    auto pool = std::make_unique<ForkServerRunner>(config);
    probe = pool->probe(probe_request, std::chrono::seconds(300));
    fork_runner = pool.get();
    runner = std::move(pool);
  } else {
    probe = probe_environment(python, share, run_dir.path(), probe_request);
    runner = std::make_unique<Supervisor>();
  }
  const std::size_t jobs =
      options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  const auto inspection = inspect_modules(
      modules_to_inspect(manifest, plans),
      inspection_settings(python, env, run_dir.path(), probe_request["targets"],
                          options.use_cache && options.static_mode != StaticMode::only, jobs),
      *runner, interrupted);
  probe["kernels"] = inspection.kernels;
  probe["keys"] = inspection.keys;
  probe["static"] = inspection.static_result;
  validate_against_triton(manifest, probe, row_targets);
  const auto triton_version = probe.at("triton").at("version").get<std::string>();
  std::map<std::string, int> warp_sizes;
  for (const auto& t : probe.at("targets"))
    if (t.contains("warp_size"))
      warp_sizes[t.at("name").get<std::string>()] = t.at("warp_size").get<int>();
  const auto known = KnownFailures::load(share.data / "known-failures.toml");
  const auto launch_limits = LaunchLimits::load(share.data / "launch-limits.toml");
  const auto& static_result =
      probe.contains("static") && probe["static"].is_object() ? probe["static"] : nlohmann::json();
  const auto prediction_for = [&](std::size_t id) {
    if (!static_result.is_object()) return nlohmann::json();
    return static_result["cells"].value(std::to_string(id), nlohmann::json());
  };
  // A compiled cell is checked against the target's launch limits, from its real metadata.
  const auto finish_cell = [&](const PlannedCell& plan, CellResult cell, nlohmann::json predicted) {
    cell.predicted = std::move(predicted);
    if (cell.kind != FailureKind::none) return cell;
    const auto limits = launch_limits.for_target(plan.target.backend, plan.target.arch);
    if (!limits) return cell;
    const auto check = check_launch(cell, *limits);
    cell.launch = nlohmann::json{
        {"needs", check.needs}, {"limits", limits->to_json()}, {"problems", check.problems}};
    if (check.problems.empty() || options.launch_limits_warn) return cell;
    cell.kind = FailureKind::launch_limit;
    cell.stage = "launch";
    cell.message = util::join(check.problems, "; ");
    cell.fingerprint = fingerprint(cell.kind, cell.stage, "", cell.message);
    cell.status = cell.expected_failure ? Status::xfail : Status::launch;
    cell.is_new = cell.status == Status::launch;
    return cell;
  };
  // A cell not compiled: predicted to fail, or (--static-only) simply not checked.
  const auto uncompiled_cell = [&](const PlannedCell& plan, const nlohmann::json& predicted) {
    CellResult cell;
    cell.kernel = plan.row->display_name();
    cell.base_kernel = plan.row->kernel;
    cell.variant = plan.row->variant;
    cell.target = plan.target.name();
    cell.triton = plan.label;
    cell.triton_version = probe.at("triton").at("version").get<std::string>();
    cell.predicted = predicted;
    cell.expected_failure = std::find(plan.row->xfail.begin(), plan.row->xfail.end(),
                                      cell.target) != plan.row->xfail.end();
    if (!predicted.is_object()) {
      cell.status = Status::unchecked;
      return cell;
    }
    cell.kind = FailureKind::predicted;
    cell.stage = "static";
    cell.message = predicted.value("reason", "");
    cell.fingerprint = fingerprint(cell.kind, cell.stage, "", cell.message);
    cell.status = cell.expected_failure ? Status::xfail : Status::failed;
    cell.is_new = cell.status == Status::failed;
    if (const auto* k = known.find(cell.fingerprint)) {
      cell.why = k->why;
      cell.link = k->link;
    }
    return cell;
  };
  const auto home = portcheck_home();
  ResultCache cache(home / "cache", options.cache_max_bytes);
  CellTimings timings(home / "timings.json");

  std::vector<std::optional<CellResult>> results(plans.size());
  std::vector<Task> tasks;
  std::size_t from_cache = 0;
  for (std::size_t id = 0; id < plans.size(); ++id) {
    auto& plan = plans[id];
    if (const auto it = warp_sizes.find(plan.target.name()); it != warp_sizes.end()) {
      plan.target.warp_size = it->second;
      plan.request["target"] = target_json(plan.target);
    }
    if (probe.contains("keys")) {
      const auto& k = probe["keys"].value(std::to_string(id), nlohmann::json());
      if (k.is_string()) plan.key = k.get<std::string>();
    }
    const auto predicted = prediction_for(id);
    if (options.static_mode == StaticMode::only ||
        (options.static_mode == StaticMode::skip && predicted.is_object())) {
      results[id] = uncompiled_cell(plan, predicted);
      continue;
    }
    if (const auto fault = inspection.failed.find(id); fault != inspection.failed.end()) {
      // Its module crashed, hung or blew the memory limit at import: not compiled.
      results[id] =
          finish_cell(plan, interpret(plan, fault->second, triton_version, known), predicted);
      continue;
    }
    if (options.use_cache && !plan.key.empty()) {
      if (const auto entry = cache.load(plan.key);
          entry && fits_limits(*entry, plan.timeout_s, plan.max_rss)) {
        results[id] = finish_cell(
            plan,
            interpret(plan, evidence_from_cache(rebased(*entry, plan.row->ref.import_root)),
                      triton_version, known),
            predicted);
        results[id]->cached = true;
        ++from_cache;
        continue;
      }
    }
    util::atomic_write_file(plan.dir / "request.json", plan.request.dump());
    Task task;
    task.id = id;
    const auto timing_key =
        fmt::format("{}|{}|{}", plan.row->display_name(), plan.target.name(), triton_version);
    task.expected_seconds =
        timings.get(timing_key).value_or(expected_seconds(*plan.row, plan.target));
    task.spec.argv = {python,
                      "-m",
                      "portcheck_worker",
                      "cell",
                      (plan.dir / "request.json").string(),
                      (plan.dir / "result.json").string(),
                      (plan.dir / "progress").string()};
    task.spec.env = env;
    task.spec.cwd = plan.row->ref.import_root;
    task.spec.stdout_path = plan.dir / "stdout";
    task.spec.stderr_path = plan.dir / "stderr";
    task.spec.request_path = plan.dir / "request.json";
    task.spec.result_path = plan.dir / "result.json";
    task.spec.progress_path = plan.dir / "progress";
    task.spec.timeout = std::chrono::milliseconds(static_cast<long long>(plan.timeout_s * 1000));
    task.spec.max_rss_bytes = plan.max_rss;
    tasks.push_back(std::move(task));
  }

  Scheduler scheduler(*runner, jobs);
  std::size_t stored = 0;
  const auto on_ended = [&](ProcessRunner::Id id, const ProcessOutcome& outcome) {
    if (outcome.how == Termination::cancelled) return;  // never finished: not a result
    const auto& plan = plans[id];
    const auto evidence = evidence_from_files(plan.dir, outcome);
    results[id] =
        finish_cell(plan, interpret(plan, evidence, triton_version, known), prediction_for(id));
    timings.set(
        fmt::format("{}|{}|{}", plan.row->display_name(), plan.target.name(), triton_version),
        outcome.wall_seconds);
    if (options.use_cache && !plan.key.empty() && cacheable(evidence, *results[id])) {
      cache.store(plan.key, cache_entry(plan.key, evidence, plan.row->ref.import_root));
      ++stored;
    }
  };
  Scheduler::OnProgress on_progress;
  if (options.progress) {
    on_progress = [&](const Progress& p) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fprintf(stderr, "\r\033[K[%zu/%zu] %zu running · %.1f s", p.done + from_cache,
                   plans.size(), p.running, elapsed);
      std::fflush(stderr);
    };
  }
  const bool completed = scheduler.run(std::move(tasks), on_ended, interrupted, on_progress);
  if (options.progress) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  const auto peak_workers = runner->peak_tree_rss_bytes();
  const auto fork_stats = fork_runner ? fork_runner->stats() : ForkServerRunner::Stats{};
  runner.reset();  // no worker outlives the matrix
  timings.save();
  if (stored > 0) cache.evict_to_fit();

  Report report;
  report.tool_version = PORTCHECK_VERSION;
  report.manifest_digest = manifest_digest;
  if (options.shard) report.shard = *options.shard;
  report.interrupted = !completed;
  report.manifest = options.demo ? "--demo" : manifest.file.string();
  report.targets = columns;
  for (const auto& row : manifest.rows) report.rows.push_back(row.display_name());
  for (auto& r : results)
    if (r) report.cells.push_back(std::move(*r));
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  report.environment = {
      {"triton",
       {{"label", label}, {"version", triton_version}, {"path", probe["triton"]["path"]}}},
      {"python", probe["python"]},
      {"host", host_name()},
      {"started", iso_time_utc(started_wall)},
      {"gpu", nullptr},
      {"options",
       {{"manifest", report.manifest},
        {"targets", columns},
        {"jobs", jobs},
        {"timeout_s", options.timeout_s ? nlohmann::json(*options.timeout_s)
                                        : nlohmann::json(manifest.timeout_s)},
        {"max_rss_bytes", options.max_rss_bytes ? nlohmann::json(*options.max_rss_bytes)
                                                : nlohmann::json(manifest.max_rss_bytes)},
        {"isolation", std::string(to_string(options.isolation))},
        {"save_ir", options.save_ir_dir
                        ? nlohmann::json(std::filesystem::absolute(*options.save_ir_dir).string())
                        : nlohmann::json(nullptr)},
        {"cache",
         options.use_cache ? nlohmann::json(cache.root().string()) : nlohmann::json(nullptr)}}},
      {"resources",
       {{"tool_peak_rss_bytes", own_peak_rss_bytes()},
        {"workers_peak_rss_bytes", peak_workers},
        {"fork_servers_started", fork_stats.servers_started},
        {"cells_retried", fork_stats.cells_retried},
        {"warm_up_s", fork_stats.warm_up_seconds}}},
      {"static", static_result.is_object()
                     ? nlohmann::json{{"seconds", static_result.value("seconds", 0.0)},
                                      {"mode", std::string(to_string(options.static_mode))}}
                     : nlohmann::json(nullptr)},
  };
  return report;
}

Report run_check(const CheckOptions& options, const std::atomic<bool>& interrupted) {
  const auto share = ShareDirs::locate();
  const auto manifest_path = options.demo ? share.demo / "portcheck.toml" : options.manifest;
  Manifest manifest = load_manifest(manifest_path);
  for (const auto& note : manifest.notes)
    std::fprintf(stderr, "triton-portcheck: warning: %s\n", note.c_str());
  if (!options.only_rows.empty()) {
    std::vector<KernelRow> chosen;
    for (const auto& wanted : options.only_rows) {
      bool found = false;
      for (const auto& row : manifest.rows)
        if (row.display_name() == wanted || row.kernel == wanted) {
          chosen.push_back(row);
          found = true;
        }
      if (!found) {
        std::vector<std::string> names;
        for (const auto& row : manifest.rows) names.push_back(row.display_name());
        throw UsageError(fmt::format("{}: no row named '{}' (rows: {})", manifest.file.string(),
                                     wanted, util::join(names, ", ")));
      }
    }
    manifest.rows = std::move(chosen);
  }

  std::vector<std::string> target_names =
      options.targets.empty() ? manifest.targets : options.targets;
  for (const auto& t : target_names) {
    std::string error;
    if (!parse_target(t, &error)) throw UsageError("--targets: " + error);
  }
  const auto labels = options.triton.empty() ? manifest.triton : options.triton;
  for (const auto& label : labels)
    if (label != "current") validate_version(label);

  std::map<std::string, std::vector<std::string>> row_targets;
  std::vector<std::string> columns;
  for (const auto& row : manifest.rows) {
    // A row's own `targets` narrows the run; --targets always wins.
    auto names = !options.targets.empty() || row.targets.empty() ? target_names : row.targets;
    row_targets[row.display_name()] = names;
    for (const auto& n : names)
      if (std::find(columns.begin(), columns.end(), n) == columns.end()) columns.push_back(n);
  }

  const auto share_python = resolve_python(options.python);
  std::vector<std::string> inherit_site;
  Report combined;
  for (const auto& label : labels) {
    std::string python = share_python;
    std::vector<std::string> inherit;
    if (label != "current") {
      auto env_python = environment_python(label);
      if (!env_python) {
        std::fprintf(stderr,
                     "triton-portcheck: no environment for Triton %s yet: creating it (once)\n",
                     label.c_str());
        const auto added = add_environment(label, {}, share_python);
        std::fprintf(stderr, "triton-portcheck: created %s (%s)\n", added.path.c_str(),
                     util::format_bytes(added.actual_bytes).c_str());
        env_python = environment_python(label);
      }
      python = env_python->string();
      touch_environment(label);
      if (options.inherit_site) {
        if (inherit_site.empty()) inherit_site = site_packages_of(share_python, share);
        inherit = inherit_site;
      }
    }
    auto part = run_environment(options, share, manifest, target_names, columns, row_targets, label,
                                python, inherit, interrupted);
    if (combined.cells.empty() && combined.rows.empty()) {
      combined = std::move(part);
      combined.environment["tritons"] = nlohmann::json::array({combined.environment["triton"]});
    } else {
      combined.environment["tritons"].push_back(part.environment["triton"]);
      for (auto& c : part.cells) combined.cells.push_back(std::move(c));
      combined.wall_s += part.wall_s;
      combined.interrupted = combined.interrupted || part.interrupted;
    }
    if (combined.interrupted) break;
  }
  return combined;
}

int exit_code_for(const Report& report) {
  if (report.interrupted) return exit_code::interrupted;
  for (const auto& c : report.cells)
    if (c.is_new) return exit_code::new_failures;
  return exit_code::ok;
}

}  // namespace portcheck
