#include "src/check/check.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "src/check/autotuned_launches.hpp"
#include "src/check/execute.hpp"
#include "src/check/plan.hpp"
#include "src/check/remote_cache_choice.hpp"
#include "src/check/run_summary.hpp"
#include "src/check/triton_validation.hpp"
#include "src/check/worker_session.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/run/cache_runs.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/result_cache.hpp"
#include "src/run/scratch_dir.hpp"
#include "src/run/tiered_cache.hpp"
#include "src/run/worker_channels.hpp"
#include "src/versions/environments.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// One Triton environment of the run: its label, the interpreter that has it, and the invoking
// site-packages it may fall back to.
struct Environment {
  std::string label;
  std::string python;
  std::vector<std::string> inherit_site;
};

// What a run with other Triton versions needs from the invoking interpreter: its Triton's version
// (a version equal to it is checked as `current`) and its site-packages (which version
// environments fall back to). Empty when it has no usable Triton.
struct InvokingPython {
  std::string triton_version;
  std::vector<std::string> site_packages;
};

InvokingPython probe_invoking(const std::string& python, const ShareDirs& share) {
  const ScratchDir scratch("triton-portcheck-site");
  try {
    const auto probe = probe_environment(python, share, scratch.path(),
                                         nlohmann::json{{"targets", nlohmann::json::array()}});
    return {probe.triton_version, probe.site_packages};
  } catch (const EnvironmentError&) {
    return {};  // no usable invoking interpreter: nothing to inherit
  }
}

// The labels with the Triton already in use named `current`; what was renamed is said once,
// among the report's warnings (`notes`), as every other thing the run has to say.
std::vector<std::string> with_current(const std::vector<std::string>& labels,
                                      const InvokingPython& invoking, const std::string& python,
                                      std::vector<std::string>& notes) {
  std::vector<std::string> replaced;
  auto out = use_current_for_installed(labels, invoking.triton_version, &replaced);
  if (!replaced.empty())
    notes.push_back(fmt::format(
        "triton {} is the one {} has: checked as `current`, with no environment of its own",
        util::join(replaced, ", "), python));
  return out;
}

// --rows: the rows asked for (by display name or kernel name), in the order asked.
void keep_only_rows(Manifest& manifest, const std::vector<std::string>& wanted_rows) {
  if (wanted_rows.empty()) return;
  std::vector<KernelRow> chosen;
  for (const auto& wanted : wanted_rows) {
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

// The interpreter of a version environment, created (once) the first time it is asked for. Its
// two lines are progress, said as it happens (creating one takes minutes), not warnings.
std::string version_python(const std::string& label, const std::string& share_python) {
  auto python = environment_python(label);
  if (!python) {
    std::fprintf(stderr, "triton-portcheck: no environment for Triton %s yet: creating it (once)\n",
                 label.c_str());
    const auto added = add_environment(label, {}, share_python);
    std::fprintf(stderr, "triton-portcheck: created %s (%s)\n", added.path.c_str(),
                 util::format_bytes(added.actual_bytes).c_str());
    python = environment_python(label);
  }
  touch_environment(label);
  return python->string();
}

ExecuteSettings execute_settings(const CheckOptions& options, const ShareDirs& share,
                                 const std::string& python) {
  ExecuteSettings settings;
  settings.session.python = python;
  settings.session.isolation = options.isolation;
  settings.session.worker_max_rss_bytes = options.worker_max_rss_bytes;
  settings.session.share = share;
  settings.jobs = options.jobs ? options.jobs : std::max(1U, std::thread::hardware_concurrency());
  settings.session.jobs = settings.jobs;
  settings.static_mode = options.static_mode;
  settings.launch_limits_warn = options.launch_limits_warn;
  settings.progress = options.progress;
  settings.data = share.data;
  return settings;
}

// One Triton environment's share of the matrix: its own worker, its own probe, its cells.
// `targets`: null in a run of one release (a target it cannot compile for is then a UsageError);
// else where the targets this release cannot compile for are recorded (their cells' verdict).
Report run_environment(const CheckOptions& options, const ShareDirs& share,
                       const Manifest& manifest, const Matrix& matrix,
                       const Environment& environment, TieredCache& cache,
                       const std::atomic<bool>& interrupted, ReleaseTargets* targets) {
  auto plan = plan_environment(manifest, matrix, options, environment.label);
  auto settings = execute_settings(options, share, environment.python);
  settings.session.warm_targets = plan.warm_targets;
  settings.unsupported_targets_are_cells = targets != nullptr;
  settings.started = std::chrono::steady_clock::now();
  const auto started_wall = std::chrono::system_clock::now();
  // Every process of this run carries the folder's marker (worker_environment adds it), so that
  // if we are killed (SIGKILL, OOM killer) its watcher can still find and end them.
  const ScratchDir run_dir("triton-portcheck");
  auto& env = settings.session.env;
  env = worker_environment(share, run_dir.path());
  if (!environment.inherit_site.empty())
    env.push_back(
        fmt::format("{}={}", channels::kInheritSite, util::join(environment.inherit_site, ":")));
  settings.session.run_dir = run_dir.path();
  CellTimings timings(portcheck_home() / "timings.json");
  settings.cache = options.use_cache ? &cache : nullptr;
  settings.timings = &timings;

  auto executed =
      execute(manifest, matrix, std::move(plan), settings, start_worker_session, interrupted);
  if (targets != nullptr) *targets = {executed.triton_version, executed.unsupported_targets};
  Report report;
  report.tool_version = PORTCHECK_VERSION;
  report.manifest_digest = matrix.digest;
  if (options.shard) report.shard = *options.shard;
  report.interrupted = !executed.completed;
  report.manifest = options.demo ? "--demo" : manifest.file.string();
  report.targets = matrix.columns;
  for (const auto& row : manifest.rows) report.rows.push_back(row.display_name());
  report.cells = std::move(executed.cells);  // a copy was a second 5 KB a cell at the peak
  judge_autotuned_launches(manifest, report.cells);
  report.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - settings.started).count();
  const PassSummary pass{environment.label, report.manifest, settings.jobs,
                         options.use_cache ? std::optional(cache.local().root()) : std::nullopt,
                         started_wall};
  report.environment = environment_block(options, manifest, matrix, executed, pass);
  report.warnings = executed.warnings;
  return report;
}

// The environments' reports as one: the first's header, every environment's cells.
void append(Report& combined, Report part) {
  if (combined.cells.empty() && combined.rows.empty()) {
    combined = std::move(part);
    combined.environment["tritons"] = nlohmann::json::array({combined.environment["triton"]});
    return;
  }
  combined.environment["tritons"].push_back(part.environment["triton"]);
  for (auto& c : part.cells) combined.cells.push_back(std::move(c));
  combined.wall_s += part.wall_s;
  combined.interrupted = combined.interrupted || part.interrupted;
  for (auto& warning : part.warnings)  // each environment's worker may say the same
    if (std::find(combined.warnings.begin(), combined.warnings.end(), warning) ==
        combined.warnings.end())
      combined.warnings.push_back(std::move(warning));
}

// What the run did with a shared cache: a block in the report, and its summary on stderr (a
// figure of the run, as the summary line is, not a warning).
void report_remote_cache(const TieredCache& cache, Report& report) {
  const auto& remote = cache.remote_settings();
  if (!remote) return;
  const auto& c = cache.counters();
  auto block = c.to_json();
  block["url"] = remote->url.shown();
  block["readonly"] = remote->readonly;
  report.environment["remote_cache"] = std::move(block);
  const auto errors =
      c.remote_errors > 0 ? fmt::format(", {} failed requests", c.remote_errors) : std::string();
  fmt::print(stderr,
             "triton-portcheck: remote cache {}{}: {} hits there, {} in the local cache, {} "
             "misses; {} results stored there{}\n",
             remote->url.shown(), remote->readonly ? " (read-only)" : "", c.remote_hits,
             c.local_hits, c.misses, c.remote_stored, errors);
}

}  // namespace

Report run_check(const CheckOptions& options, const std::atomic<bool>& interrupted) {
  const auto share = ShareDirs::locate();
  const auto manifest_path = options.demo ? share.demo / "portcheck.toml" : options.manifest;
  Manifest manifest = load_manifest(manifest_path);
  keep_only_rows(manifest, options.only_rows);
  for (const auto& t : options.targets.empty() ? manifest.targets : options.targets) {
    std::string error;
    if (!parse_target(t, &error)) throw UsageError("--targets: " + error);
  }
  auto labels = options.triton.empty() ? manifest.triton : options.triton;
  for (const auto& label : labels)
    if (label != "current") validate_compilable_release(label, "--triton");
  const auto matrix = plan_matrix(manifest, options.targets, util::read_file(manifest.file));

  const auto share_python = resolve_python(options.python);
  sweep_abandoned_environments();  // what killed `env add` runs left
  InvokingPython invoking;
  std::vector<std::string> notes = manifest.notes;
  if (std::any_of(labels.begin(), labels.end(), [](const auto& l) { return l != "current"; })) {
    invoking = probe_invoking(share_python, share);
    labels = with_current(labels, invoking, share_python, notes);
  }
  ResultCache local_cache(portcheck_home() / "cache", options.cache_max_bytes);
  const auto remote = remote_cache_choice(options, manifest);
  TieredCache cache(local_cache, remote ? open_remote_store(remote->url, remote->timeout) : nullptr,
                    remote);
  Report combined;
  // Several releases: a target one of them cannot compile for is that release's cells' verdict;
  // the run is refused only for a target none of them can compile for.
  const bool several = labels.size() > 1;
  std::vector<ReleaseTargets> releases;
  for (const auto& label : labels) {
    Environment environment{label, share_python, {}};
    if (label != "current") {
      environment.python = version_python(label, share_python);
      if (options.inherit_site) environment.inherit_site = invoking.site_packages;
    }
    ReleaseTargets targets;
    const bool as_cells = several || options.unsupported_targets_are_cells;
    append(combined, run_environment(options, share, manifest, matrix, environment, cache,
                                     interrupted, as_cells ? &targets : nullptr));
    releases.push_back(std::move(targets));
    if (combined.interrupted) break;
  }
  if (options.use_cache) {
    record_cache_run(local_cache.root(), cache.counters(), remote);
    report_remote_cache(cache, combined);
  }
  if (several && !combined.interrupted) validate_targets_across(manifest, matrix, releases);
  combined.warnings.insert(combined.warnings.begin(), notes.begin(), notes.end());
  return combined;
}

int exit_code_for(const Report& report) {
  if (report.interrupted) return exit_code::interrupted;
  if (!report.missing_shards.empty()) return exit_code::new_failures;  // unchecked is not passed
  for (const auto& c : report.cells)
    if (c.is_new) return exit_code::new_failures;
  return exit_code::ok;
}

}  // namespace portcheck
