#include "src/check.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "src/classify.hpp"
#include "src/envs.hpp"
#include "src/errors.hpp"
#include "src/known_failures.hpp"
#include "src/manifest.hpp"
#include "src/scheduler.hpp"
#include "src/supervisor.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

constexpr std::size_t kLogLimit = 16000;

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string suggestion(const std::string& word, const std::set<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    const auto d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
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

struct PlannedCell {
  const KernelRow* row;
  Target target;
  std::filesystem::path dir;
  double timeout_s;
  std::uint64_t max_rss;
};

CellResult interpret(const PlannedCell& plan, const ProcessOutcome& outcome,
                     const std::string& triton_version, const KnownFailures& known) {
  CellEvidence evidence;
  evidence.outcome = outcome;
  if (const auto text = util::read_file_bounded(plan.dir / "result.json", 1 << 24)) {
    try {
      evidence.result = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception&) {
      evidence.result.reset();
    }
  }
  evidence.last_stage = last_stage_from_progress(
      util::read_file_bounded(plan.dir / "progress", 1 << 16).value_or(""));
  evidence.stderr_text = util::read_file_bounded(plan.dir / "stderr", kLogLimit).value_or("");
  const auto c = classify(evidence);

  CellResult cell;
  const auto& row = *plan.row;
  cell.kernel = row.display_name();
  cell.base_kernel = row.kernel;
  cell.variant = row.variant;
  cell.target = plan.target.name();
  cell.triton = "current";
  cell.triton_version = triton_version;
  cell.kind = c.kind;
  cell.stage = c.stage;
  cell.pass = c.pass;
  cell.message = c.message;
  cell.fingerprint = c.fingerprint;
  cell.error_source = c.error_source;
  cell.wall_s = outcome.wall_seconds;
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

}  // namespace

Report run_check(const CheckOptions& options, const std::atomic<bool>& interrupted) {
  const auto started = std::chrono::steady_clock::now();
  const auto started_wall = std::chrono::system_clock::now();
  const auto share = ShareDirs::locate();
  const auto manifest_path = options.demo ? share.demo / "portcheck.toml" : options.manifest;
  Manifest manifest = load_manifest(manifest_path);

  std::vector<std::string> target_names =
      options.targets.empty() ? manifest.targets : options.targets;
  for (const auto& t : target_names) {
    std::string error;
    if (!parse_target(t, &error)) throw UsageError("--targets: " + error);
  }
  for (const auto& label : manifest.triton)
    if (label != "current")
      throw UsageError(
          fmt::format("{}: defaults.triton: only \"current\" is supported by this version of "
                      "triton-portcheck (the Python given by --python, $VIRTUAL_ENV or python3)",
                      manifest.file.string()));

  std::map<std::string, std::vector<std::string>> row_targets;
  std::vector<std::string> columns;
  for (const auto& row : manifest.rows) {
    // A row's own `targets` narrows the run; --targets always wins.
    auto names = !options.targets.empty() || row.targets.empty() ? target_names : row.targets;
    row_targets[row.display_name()] = names;
    for (const auto& n : names)
      if (std::find(columns.begin(), columns.end(), n) == columns.end()) columns.push_back(n);
  }

  const auto python = resolve_python(options.python);
  util::TempDir run_dir("triton-portcheck");
  nlohmann::json probe_request;
  probe_request["targets"] = nlohmann::json::array();
  for (const auto& n : columns) {
    const auto t = *parse_target(n);
    probe_request["targets"].push_back(
        {{"backend", t.backend}, {"arch", t.arch}, {"warp_size", t.warp_size}});
  }
  probe_request["kernels"] = nlohmann::json::array();
  for (const auto& row : manifest.rows)
    probe_request["kernels"].push_back(
        {{"id", row.display_name()}, {"kernel", kernel_ref_json(row.ref)}});
  const auto probe = probe_environment(python, share, run_dir.path(), probe_request);
  validate_against_triton(manifest, probe, row_targets);
  const auto triton_version = probe.at("triton").at("version").get<std::string>();
  std::map<std::string, int> warp_sizes;
  for (const auto& t : probe.at("targets"))
    if (t.contains("warp_size"))
      warp_sizes[t.at("name").get<std::string>()] = t.at("warp_size").get<int>();

  const auto known = KnownFailures::load(share.data / "known-failures.toml");
  const auto env = worker_environment(share, run_dir.path() / "triton-cache");

  std::vector<PlannedCell> plans;
  std::vector<Task> tasks;
  for (const auto& row : manifest.rows) {
    for (const auto& name : row_targets[row.display_name()]) {
      Target target = *parse_target(name);
      if (const auto it = warp_sizes.find(name); it != warp_sizes.end())
        target.warp_size = it->second;
      const auto id = plans.size();
      const auto dir = run_dir.path() / fmt::format("cell-{}", id);
      std::filesystem::create_directories(dir);
      nlohmann::json request;
      request["kernel"] = kernel_ref_json(row.ref);
      request["row_name"] = row.display_name();
      request["signature"] = row.signature;
      request["constants"] = row.constants;
      request["options"] = row.options;
      if (row.specialization)
        request["specialization"] = nlohmann::json::parse(*row.specialization);
      request["target"] = {
          {"backend", target.backend}, {"arch", target.arch}, {"warp_size", target.warp_size}};
      util::atomic_write_file(dir / "request.json", request.dump());

      const double timeout_s =
          options.timeout_s.value_or(row.timeout_s.value_or(manifest.timeout_s));
      const auto max_rss =
          options.max_rss_bytes.value_or(row.max_rss_bytes.value_or(manifest.max_rss_bytes));
      Task task;
      task.id = id;
      task.expected_seconds = expected_seconds(row, target);
      task.spec.argv = {python,
                        "-m",
                        "portcheck_worker",
                        "cell",
                        (dir / "request.json").string(),
                        (dir / "result.json").string(),
                        (dir / "progress").string()};
      task.spec.env = env;
      task.spec.cwd = row.ref.import_root;
      task.spec.stdout_path = dir / "stdout";
      task.spec.stderr_path = dir / "stderr";
      task.spec.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
      task.spec.max_rss_bytes = max_rss;
      tasks.push_back(std::move(task));
      plans.push_back({&row, target, dir, timeout_s, max_rss});
    }
  }

  std::vector<std::optional<CellResult>> results(plans.size());
  const std::size_t jobs =
      options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  Supervisor supervisor;
  Scheduler scheduler(supervisor, jobs);
  const auto on_ended = [&](ProcessRunner::Id id, const ProcessOutcome& outcome) {
    if (outcome.how == Termination::cancelled) return;  // never finished: not a result
    results[id] = interpret(plans[id], outcome, triton_version, known);
  };
  Scheduler::OnProgress on_progress;
  if (options.progress) {
    on_progress = [&](const Progress& p) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fprintf(stderr, "\r\033[K[%zu/%zu] %zu running · %.1f s", p.done, p.total, p.running,
                   elapsed);
      std::fflush(stderr);
    };
  }
  const bool completed = scheduler.run(std::move(tasks), on_ended, interrupted, on_progress);
  if (options.progress) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

  Report report;
  report.tool_version = PORTCHECK_VERSION;
  report.interrupted = !completed;
  report.manifest = options.demo ? "--demo" : manifest.file.string();
  report.targets = columns;
  for (const auto& row : manifest.rows) report.rows.push_back(row.display_name());
  for (auto& r : results)
    if (r) report.cells.push_back(std::move(*r));
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  report.environment = {
      {"triton",
       {{"label", "current"}, {"version", triton_version}, {"path", probe["triton"]["path"]}}},
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
        {"isolation", "process"}}},
  };
  return report;
}

int exit_code_for(const Report& report) {
  if (report.interrupted) return exit_code::interrupted;
  for (const auto& c : report.cells)
    if (c.is_new) return exit_code::new_failures;
  return exit_code::ok;
}

std::vector<FailureGroup> group_failures(const Report& report) {
  std::vector<FailureGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& row : report.rows)
    for (const auto& target : report.targets)
      for (const auto& cell : report.cells) {
        if (cell.kernel != row || cell.target != target || !cell.failed_outcome()) continue;
        auto [it, inserted] = index.emplace(cell.fingerprint, groups.size());
        if (inserted) {
          const auto n = groups.size();
          std::string letter = n < 26 ? std::string(1, static_cast<char>('A' + n))
                                      : fmt::format("{}{}", static_cast<char>('A' + n / 26 - 1),
                                                    static_cast<char>('A' + n % 26));
          groups.push_back({letter, cell.fingerprint, {}});
        }
        groups[it->second].cells.push_back(&cell);
      }
  return groups;
}

}  // namespace portcheck
