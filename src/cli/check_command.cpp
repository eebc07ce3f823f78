// `triton-portcheck check`: the matrix of a manifest's rows x targets x Triton environments.
#include <fmt/format.h>

#include "src/check/check.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/cli/output_flags.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/core/shard.hpp"
#include "util/term.hpp"

namespace portcheck::cli {
namespace {

// The flags as typed; check_options() turns them into CheckOptions.
struct CheckFlags {
  CheckOptions options;
  std::vector<std::string> raw_targets;
  std::string timeout_text, max_rss_text;
  bool quiet = false;
  OutputFlags outputs;
  std::string static_text = "compile";
  bool static_only = false;
  std::string launch_text = "error";
  std::vector<std::string> triton_labels;
  bool no_inherit_site = false;
  std::optional<std::filesystem::path> save_ir;
  std::string shard_text;
  std::string isolation = "fork";
  bool no_cache = false;
  std::string worker_max_rss_text;
  std::optional<double> cache_timeout;
};

// What to check, with which limits, and where the reports go.
void add_selection_options(CLI::App* check, CheckFlags& f) {
  check->add_option("-m,--manifest", f.options.manifest, "Manifest file (default: portcheck.toml)");
  check->add_flag("--demo", f.options.demo, "Check the bundled demo kernels instead of a manifest");
  check->add_option("-t,--targets", f.raw_targets,
                    "Targets, comma-separated (cuda:90,hip:gfx942); overrides the manifest");
  check->add_option(
      "--python", f.options.python,
      "Python interpreter holding Triton (default: $VIRTUAL_ENV, else the environment "
      "the tool is installed in if it has Triton, else python3)");
  check->add_option("--timeout", f.timeout_text,
                    "Seconds per cell, whole process tree (overrides the manifest)");
  check->add_option("--max-rss", f.max_rss_text,
                    "Memory per cell, whole process tree, e.g. 8GiB (overrides the manifest)");
  check
      ->add_option("-j,--jobs", f.options.jobs, "Cells compiled at once (default: number of cores)")
      ->check(CLI::Range(1, 4096));  // -1 would wrap to 2^64-1 in a size_t
  add_output_flags(check, f.outputs);
}

// A shared cache other machines fill (docs/remote-cache.md).
void add_remote_cache_options(CLI::App* check, CheckFlags& f) {
  check->add_option("--cache-url", f.options.cache_url,
                    "Shared result cache: redis://HOST[:PORT][/DB] or http(s)://HOST/PATH; none: "
                    "no shared cache (default: $TRITON_PORTCHECK_CACHE_URL, else the manifest's "
                    "cache_url)");
  check->add_flag("--cache-readonly", f.options.cache_readonly,
                  "Read the shared cache, never write to it (untrusted pull requests)");
  check
      ->add_option("--cache-timeout", f.cache_timeout,
                   "Seconds the shared cache may take to answer before this run goes on without "
                   "it (default 2)")
      ->check(CLI::Range(0.001, 600.0));
}

// How the cells are compiled: static pre-checks, Triton environments, isolation, cache.
void add_mode_options(CLI::App* check, CheckFlags& f) {
  check
      ->add_option(
          "--static", f.static_text,
          "compile: predict failures, then compile every cell (default); skip: do not compile "
          "cells predicted to fail")
      ->check(CLI::IsMember({"compile", "skip"}));
  check->add_flag("--static-only", f.static_only,
                  "Compile nothing: the matrix from the static pre-checks alone");
  check
      ->add_option(
          "--launch-limits", f.launch_text,
          "error: a compiled cell that exceeds a launch limit of its target fails (default); warn: "
          "report it only")
      ->check(CLI::IsMember({"error", "warn"}));
  check->add_option(
      "--triton", f.triton_labels,
      "Triton environments, comma-separated: current (the --python one) and versions such as "
      "3.8.0 (created on demand with env add)");
  check->add_flag("--no-inherit-site", f.no_inherit_site,
                  "Version environments do not see the invoking interpreter's site-packages");
  check->add_option("--save-ir", f.save_ir,
                    "Keep every compiled cell's IR at every stage under DIR (for diff --ir)");
  check->add_option("--shard", f.shard_text,
                    "Compile only part K of N of the matrix (K/N), balanced by expected cost");
  check->add_flag("-q,--quiet", f.quiet, "No live progress line");
  check->add_flag("--reduce", f.options.reduce,
                  "Compile one row of each group of rows that differ only in an argument's "
                  "divisibility (:16), reporting the others with its verdict");
  check
      ->add_option("--isolation", f.isolation,
                   "fork: one warm worker forks a child per cell (default); process: a fresh "
                   "interpreter per cell")
      ->check(CLI::IsMember({"fork", "process"}));
  check->add_flag("--no-cache", f.no_cache,
                  "Compile every cell, neither reading nor writing the result cache");
  add_remote_cache_options(check, f);
  check->add_option("--worker-max-rss", f.worker_max_rss_text,
                    "Replace the fork server (its zygotes included) when it grows beyond this "
                    "(default: a quarter of the machine's memory, at least 4GiB)");
}

// The flags as CheckOptions; throws UsageError for a flag that does not parse. The checks run in
// the order the flags' messages have always come in, so one bad command line names the same flag.
CheckOptions check_options(const CheckFlags& f, const CLI::App& check) {
  CheckOptions options = f.options;
  if (!f.shard_text.empty()) {
    std::string error;
    options.shard = parse_shard(f.shard_text, &error);
    if (!options.shard) throw UsageError(error);
  }
  // CLI::IsMember admits only names the tables know.
  options.isolation = *parse_isolation(f.isolation);
  options.static_mode = f.static_only ? StaticMode::only : *parse_static_mode(f.static_text);
  options.launch_limits_warn = f.launch_text == "warn";
  options.triton = split_list(f.triton_labels);
  options.inherit_site = !f.no_inherit_site;
  options.save_ir_dir = f.save_ir;
  if (f.save_ir) prepare_output_folder(*f.save_ir, "--save-ir");
  // The IR is written by the compile itself: cells served from the cache would leave none.
  options.use_cache = !f.no_cache && !f.save_ir;
  options.cache_max_bytes = cache_bound();
  options.cache_timeout_s = f.cache_timeout;
  if (!f.worker_max_rss_text.empty())
    options.worker_max_rss_bytes = positive_size(f.worker_max_rss_text, "--worker-max-rss", "4GiB");
  options.targets = split_list(f.raw_targets);
  if (!f.timeout_text.empty()) options.timeout_s = parse_timeout(f.timeout_text);
  if (!f.max_rss_text.empty())
    options.max_rss_bytes = positive_size(f.max_rss_text, "--max-rss", "8GiB");
  if (options.demo && check.count("--manifest") > 0)
    throw UsageError("--demo and --manifest exclude each other");
  return options;
}

int run_check_command(const CheckFlags& f, const CLI::App& check) {
  auto options = check_options(f, check);
  options.progress = !f.quiet && util::is_terminal(stderr);
  check_destinations(f.outputs.outputs);
  const auto baseline = baseline_entries(f.outputs);
  auto report = run_check(options, interrupted());
  say_warnings(report);
  return finish(std::move(report), f.outputs, baseline);
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto flags = std::make_shared<CheckFlags>();
  auto* check =
      app.add_subcommand("check", "Compile every kernel row of a manifest for every target");
  add_selection_options(check, *flags);
  add_mode_options(check, *flags);
  check->footer(kExitCodes);
  return {check, [flags, check] { return run_check_command(*flags, *check); }};
}

}  // namespace portcheck::cli
