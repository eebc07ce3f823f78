#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "src/capture/capture.hpp"
#include "src/check/check.hpp"
#include "src/check/launch_limits.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/core/shard.hpp"
#include "src/core/target.hpp"
#include "src/export/export.hpp"
#include "src/report/baseline.hpp"
#include "src/report/json.hpp"
#include "src/report/terminal.hpp"
#include "src/report/write_reports.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/result_cache.hpp"
#include "src/versions/diff.hpp"
#include "src/versions/environments.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/term.hpp"

namespace {

using namespace portcheck;

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int /*signal*/) { g_interrupted.store(true); }

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const char* kExitCodes =
    "Exit codes:\n"
    "  0  no new failures\n"
    "  1  new failures (cells that failed and are not marked xfail)\n"
    "  2  bad arguments or manifest (nothing was compiled)\n"
    "  3  Triton missing or the Python environment is broken\n"
    "  4  internal error of triton-portcheck (please report it)\n"
    "  130  interrupted (Ctrl-C); the finished cells are still reported\n";

// "-t cuda:80,cuda:90 -t hip:gfx942" -> three names (and the same for --triton)
std::vector<std::string> split_list(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const auto& item : raw)
    for (const auto& part : util::split(item, ','))
      if (!util::trim(part).empty()) out.emplace_back(util::trim(part));
  return out;
}

int run_targets(const std::string& python_flag, const std::vector<std::string>& raw_targets) {
  using namespace portcheck;
  auto names = split_list(raw_targets);
  if (names.empty()) names = default_target_names();
  nlohmann::json request;
  request["targets"] = nlohmann::json::array();
  for (const auto& n : names) {
    std::string error;
    const auto t = parse_target(n, &error);
    if (!t) throw UsageError("--targets: " + error);
    request["targets"].push_back(
        {{"backend", t->backend}, {"arch", t->arch}, {"warp_size", t->warp_size}});
  }
  request["predict"] = true;  // with no cells: just the tables the static pre-checks use
  request["keys"] = false;
  const auto share = ShareDirs::locate();
  const auto python = resolve_python(python_flag);
  util::TempDir scratch("triton-portcheck-targets");
  const auto probe = probe_environment(python, share, scratch.path(), request);
  fmt::print("triton {} at {}\npython {} ({})\n", probe["triton"]["version"].get<std::string>(),
             probe["triton"]["path"].get<std::string>(),
             probe["python"]["version"].get<std::string>(),
             probe["python"]["executable"].get<std::string>());
  std::string backends;
  for (const auto& [name, fields] : probe["option_fields"].items())
    backends += (backends.empty() ? "" : ", ") + name;
  fmt::print("backends: {}\n\n", backends);
  fmt::print("{:<14}{:<11}{}\n", "target", "warp size", "assembler");
  for (const auto& t : probe["targets"]) {
    if (t.contains("error")) {
      fmt::print("{:<14}{:<11}{}\n", t["name"].get<std::string>(), "-",
                 "cannot compile: " + t["error"].get<std::string>());
      continue;
    }
    const auto& as = t["assembler"];
    std::string assembler =
        as["path"].is_string()
            ? fmt::format("{} (CUDA {})",
                          std::filesystem::path(as["path"].get<std::string>()).filename().string(),
                          as["version"].get<std::string>())
            : as["version"].get<std::string>();
    fmt::print("{:<14}{:<11}{}\n", t["name"].get<std::string>(), t["warp_size"].get<int>(),
               assembler);
  }

  // The tables the static pre-checks and the launch-limit check use, per target.
  const auto& tables = probe["static"]["tables"];
  fmt::print("\nstatic pre-checks, read from this Triton: libdevice functions: {}\n", [&] {
    std::string out;
    for (const auto& [backend, fns] : tables["libdevice"].items())
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", backend, fns.size());
    return out;
  }());
  const auto limits = LaunchLimits::load(share.data / "launch-limits.toml");
  fmt::print("launch limits from data/launch-limits.toml (each number cited there)\n\n");
  fmt::print("{:<14}{:<36}{:<9}{:<13}{:<11}{}\n", "target", "fp8 dtypes", "threads", "shared (B)",
             "regs/blk", "cluster");
  for (const auto& n : names) {
    const auto t = *parse_target(n);
    std::string fp8 = "?";
    if (tables["fp8"].contains(n) && tables["fp8"][n].is_array()) {
      fp8.clear();
      for (const auto& d : tables["fp8"][n]) fp8 += (fp8.empty() ? "" : ",") + d.get<std::string>();
    }
    const auto l = limits.for_target(t.backend, t.arch);
    const auto show = [](const std::optional<std::uint64_t>& v) {
      return v ? std::to_string(*v) : std::string("-");
    };
    if (!l) {
      fmt::print("{:<14}{:<36}{}\n", n, fp8, "(not in the launch-limit table: not checked)");
      continue;
    }
    fmt::print("{:<14}{:<36}{:<9}{:<13}{:<11}{}\n", n, fp8, show(l->max_threads_per_block),
               show(l->max_shared_bytes_per_block), show(l->max_registers_per_block),
               show(l->max_cluster_size));
  }
  return exit_code::ok;
}

// `triton-portcheck bogus`, `env bogus`, a bare `cache`: CLI11 would only say that a subcommand
// is required. Names the word (or its absence) and lists the commands where one is expected;
// nothing when the words are known.
std::optional<std::string> unknown_command(const CLI::App& app,
                                           const std::vector<std::string_view>& args) {
  const CLI::App* current = &app;
  std::string path;  // "env ", the commands read so far
  for (std::size_t i = 0;; ++i) {
    if (current->get_require_subcommand_min() == 0 || (i < args.size() && args[i].starts_with("-")))
      return std::nullopt;
    std::vector<std::string> names;
    const CLI::App* next = nullptr;
    for (const auto* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      if (i < args.size() && sub->get_name() == args[i]) next = sub;
    }
    const auto listed = fmt::format("the commands{} are: {} (see {}--help)",
                                    path.empty() ? "" : fmt::format(" of '{}'", util::trim(path)),
                                    util::join(names, ", "), path);
    if (i == args.size()) return fmt::format("a command is needed; {}", listed);
    if (next == nullptr) {
      const auto near = util::closest_match(args[i], names);
      return fmt::format("unknown command '{}{}'{}; {}", path, args[i],
                         near.empty() ? "" : fmt::format(" (did you mean '{}{}'?)", path, near),
                         listed);
    }
    path += fmt::format("{} ", args[i]);
    current = next;
  }
}

// TRITON_PORTCHECK_CACHE_MAX bounds the result cache (default 512MiB).
std::uint64_t cache_bound() {
  const char* text = std::getenv("TRITON_PORTCHECK_CACHE_MAX");
  if (text == nullptr || *text == '\0') return kDefaultCacheBytes;
  const auto bytes = util::parse_byte_size(text);
  if (!bytes || *bytes == 0)
    throw UsageError(
        fmt::format("TRITON_PORTCHECK_CACHE_MAX: '{}' is not a size such as 512MiB", text));
  return *bytes;
}

int run_cache(const std::string& action) {
  ResultCache cache(portcheck_home() / "cache", cache_bound());
  if (action == "clean") {
    const auto removed = cache.clean();
    fmt::print("removed {} cached results from {}\n", removed, cache.root().string());
    return exit_code::ok;
  }
  const auto stats = cache.stats();
  fmt::print(
      "cache:   {}\nentries: {}\nsize:    {} of {} (least recently used entries are evicted beyond "
      "it)\n",
      cache.root().string(), stats.entries, util::format_bytes(stats.bytes),
      util::format_bytes(cache.max_bytes()));
  return exit_code::ok;
}

// Flags every command that produces a report shares: the formats, and the baseline.
struct OutputFlags {
  ReportOutputs outputs;
  std::optional<std::filesystem::path> baseline;
};

void add_output_flags(CLI::App* command, OutputFlags& flags) {
  command->add_option("--json", flags.outputs.json,
                      "Write the JSON report (docs/report-schema.md) to FILE");
  command->add_option("--junit", flags.outputs.junit,
                      "Write JUnit XML (one testcase per cell) to FILE");
  command->add_option("--sarif", flags.outputs.sarif,
                      "Write SARIF 2.1.0 (one result per failing cell) to FILE");
  command->add_option("--html", flags.outputs.html, "Write a self-contained HTML report to FILE");
  command->add_option("--markdown", flags.outputs.markdown, "Write the matrix as Markdown to FILE");
  command->add_flag("--github", flags.outputs.github,
                    "GitHub Actions: ::error annotations for new failures, the matrix appended to "
                    "$GITHUB_STEP_SUMMARY");
  command->add_option(
      "--baseline", flags.baseline,
      "Only failures absent from FILE (a --write-baseline file or any JSON report) are new");
  command->add_option("--write-baseline", flags.outputs.write_baseline,
                      "Record today's failures in FILE");
}

// Prints the matrix and writes the requested files; the exit code follows the report.
int finish(Report report, const OutputFlags& flags, const std::vector<BaselineEntry>& baseline) {
  if (flags.baseline) apply_baseline(report, baseline, flags.baseline->string());
  FILE* matrix = writes_to_stdout(flags.outputs) ? stderr : stdout;  // the report owns stdout
  std::fputs(render_terminal(report, TerminalStyle{util::use_colour(matrix)}).c_str(), matrix);
  std::fflush(matrix);
  int code = exit_code_for(report);
  for (const auto& error : write_reports(report, flags.outputs)) {
    std::fprintf(stderr, "triton-portcheck: %s\n", error.c_str());
    code = exit_code::environment;
  }
  return code;
}

int run_check_command(CheckOptions options, const OutputFlags& flags, bool quiet) {
  options.progress = !quiet && util::is_terminal(stderr);
  check_destinations(flags.outputs);
  const auto baseline =
      flags.baseline ? load_baseline(*flags.baseline) : std::vector<BaselineEntry>{};
  return finish(run_check(options, g_interrupted), flags, baseline);
}

int run_export_command(CheckOptions options, const std::string& kernel,
                       const std::string& signature, const std::string& constants,
                       const std::string& compile_options) {
  std::error_code ec;
  std::filesystem::create_directories(*options.export_dir, ec);
  if (ec) throw UsageError(fmt::format("-o {}: {}", options.export_dir->string(), ec.message()));
  std::optional<util::TempDir> adhoc;
  if (!kernel.empty()) {
    // An ad-hoc row: the same parser, so the same checks and messages as a manifest.
    adhoc.emplace("triton-portcheck-export");
    const auto colon = kernel.rfind(':');
    const auto file_part = kernel.substr(0, colon);
    const auto target = file_part.ends_with(".py")
                            ? std::filesystem::absolute(file_part).string() + kernel.substr(colon)
                            : kernel;
    std::string text =
        fmt::format("[[kernel]]\nname = {}\ntarget = {}\n",
                    nlohmann::json(kernel.substr(colon + 1)).dump(), nlohmann::json(target).dump());
    if (!signature.empty()) text += "signature = " + signature + "\n";
    if (!constants.empty()) text += "constants = " + constants + "\n";
    if (!compile_options.empty()) text += "options = " + compile_options + "\n";
    options.manifest = adhoc->path() / "export.toml";
    util::atomic_write_file(options.manifest, text);
    options.demo = false;
  }
  options.use_cache = false;  // the binaries themselves are wanted, not a verdict
  options.progress = util::is_terminal(stderr);
  const auto report = run_check(options, g_interrupted);
  std::fputs(render_terminal(report, TerminalStyle{util::use_colour(stdout)}).c_str(), stdout);
  int code = exit_code_for(report);
  for (const auto& cell : report.cells) {
    if (cell.status != Status::ok && cell.status != Status::xpass) {
      std::fprintf(stderr, "triton-portcheck: not exported: %s on %s failed (%s in %s: %s)\n",
                   cell.kernel.c_str(), cell.target.c_str(), to_string(cell.kind).c_str(),
                   cell.stage.c_str(), cell.message.c_str());
      code = exit_code::new_failures;
      continue;
    }
    for (const auto& file : write_export(cell)) fmt::print("wrote {}\n", file);
  }
  return code;
}

int run_env_add(const std::string& version, const std::vector<std::string>& with,
                const std::string& python) {
  validate_version(version);
  const auto base = resolve_python(python.empty() ? "python3" : python);
  const auto added = add_environment(version, split_list(with), base);
  if (added.already_present) {
    fmt::print("triton {} is already installed at {} ({})\n", version, added.path.string(),
               util::format_bytes(added.actual_bytes));
    return exit_code::ok;
  }
  fmt::print("triton {}: wheel {}, expected on disk {}, actual {}\n  {}\n", version,
             util::format_bytes(added.wheel_bytes), util::format_bytes(added.expected_bytes),
             util::format_bytes(added.actual_bytes), added.path.string());
  return exit_code::ok;
}

int run_env_list() {
  const auto envs = list_environments();
  if (envs.empty()) {
    fmt::print("no Triton environments yet under {} (env add VERSION creates one)\n",
               environments_root().string());
    return exit_code::ok;
  }
  fmt::print("{:<12}{:<10}{:<12}{:<22}{}\n", "triton", "python", "size", "last used", "path");
  for (const auto& e : envs)
    fmt::print("{:<12}{:<10}{:<12}{:<22}{}\n", e.version, e.python_version,
               util::format_bytes(e.bytes), e.last_used, e.path.string());
  return exit_code::ok;
}

int run_env_remove(const std::string& version) {
  validate_version(version);
  if (!remove_environment(version))
    throw UsageError(fmt::format("env remove {}: no such environment", version));
  fmt::print("removed the environment of triton {}\n", version);
  return exit_code::ok;
}

// The normalised IR diff, at one stage, of every pair that did not stay the same.
std::string render_ir_diff(const Report& old_report, const Report& new_report,
                           const DiffResult& result, const std::string& stage) {
  if (std::find(ir_stages().begin(), ir_stages().end(), stage) == ir_stages().end())
    throw UsageError(fmt::format("--ir {}: not a saved stage (one of {})", stage,
                                 util::join(ir_stages(), ", ")));
  const auto old_dir = saved_ir_dir(old_report);
  const auto new_dir = saved_ir_dir(new_report);
  if (!old_dir || !new_dir)
    return "no IR to compare: run check with --save-ir DIR to keep it (the report records where)\n";
  std::string out;
  for (const auto* list : {&result.regressed, &result.fixed, &result.fail_differently,
                           &result.changed, &result.slower})
    for (const auto& change : *list) {
      if (!change.old_cell || !change.new_cell) continue;
      const auto a = ir_file(*old_dir, *change.old_cell, stage);
      const auto b = ir_file(*new_dir, *change.new_cell, stage);
      if (!a || !b) continue;
      out += unified_diff(normalize_ir(util::read_file(*a)), normalize_ir(util::read_file(*b)),
                          a->string(), b->string());
    }
  return out.empty() ? fmt::format("no {} differences in the changed cells\n", stage) : out;
}

int run_diff(const std::vector<std::string>& inputs, const std::vector<std::string>& versions,
             const std::vector<std::string>& targets, const DiffOptions& options,
             const std::vector<std::string>& fail_on, const std::string& ir_stage) {
  DiffSelection selection;
  if (inputs.size() == 2) {
    if (!versions.empty() || !targets.empty())
      throw UsageError(
          "diff: two reports are compared cell by cell; --versions and --targets take one report");
    selection.mode = DiffSelection::Mode::runs;
    selection.a = inputs[0];
    selection.b = inputs[1];
  } else if (versions.size() == 2) {
    selection.mode = DiffSelection::Mode::versions;
    selection.a = versions[0];
    selection.b = versions[1];
  } else if (targets.size() == 2) {
    selection.mode = DiffSelection::Mode::targets;
    selection.a = targets[0];
    selection.b = targets[1];
  } else {
    throw UsageError(
        "diff: give two reports, or one report with --versions OLD NEW or --targets OLD NEW");
  }
  const auto old_report = load_report(inputs[0]);
  const auto new_report = inputs.size() == 2 ? load_report(inputs[1]) : old_report;
  const auto result = diff_reports(old_report, new_report, selection, options);
  const int code = diff_exit_code(result, fail_on);  // validates --fail-on before printing
  std::fputs(render_diff(result, util::use_colour(stdout)).c_str(), stdout);
  if (!ir_stage.empty())
    std::fputs(render_ir_diff(old_report, new_report, result, ir_stage).c_str(), stdout);
  return code;
}

int run_report_command(const std::filesystem::path& input, const OutputFlags& flags) {
  check_destinations(flags.outputs);
  const auto baseline =
      flags.baseline ? load_baseline(*flags.baseline) : std::vector<BaselineEntry>{};
  return finish(load_report(input), flags, baseline);
}

int run_merge_command(const std::vector<std::string>& inputs, const std::filesystem::path& output,
                      const OutputFlags& flags) {
  OutputFlags with_output = flags;
  with_output.outputs.json = output;
  check_destinations(with_output.outputs);
  std::vector<Report> parts;
  for (const auto& file : inputs) parts.push_back(load_report(file));
  const auto baseline =
      flags.baseline ? load_baseline(*flags.baseline) : std::vector<BaselineEntry>{};
  return finish(merge_reports(parts, inputs), with_output, baseline);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace portcheck;
  CLI::App app{
      "triton-portcheck: compile Triton kernels for every GPU target, on a machine without a GPU,\n"
      "and show where each kernel x target breaks and why."};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(PORTCHECK_VERSION));

  CheckOptions options;
  std::vector<std::string> raw_targets;
  std::string timeout_text, max_rss_text;
  bool quiet = false;
  auto* check =
      app.add_subcommand("check", "Compile every kernel row of a manifest for every target");
  check->add_option("-m,--manifest", options.manifest, "Manifest file (default: portcheck.toml)");
  check->add_flag("--demo", options.demo, "Check the bundled demo kernels instead of a manifest");
  check->add_option("-t,--targets", raw_targets,
                    "Targets, comma-separated (cuda:90,hip:gfx942); overrides the manifest");
  check->add_option(
      "--python", options.python,
      "Python interpreter holding Triton (default: $VIRTUAL_ENV, else the environment "
      "the tool is installed in if it has Triton, else python3)");
  check->add_option("--timeout", timeout_text,
                    "Seconds per cell, whole process tree (overrides the manifest)");
  check->add_option("--max-rss", max_rss_text,
                    "Memory per cell, whole process tree, e.g. 8GiB (overrides the manifest)");
  check->add_option("-j,--jobs", options.jobs, "Cells compiled at once (default: number of cores)")
      ->check(CLI::Range(1, 4096));  // -1 would wrap to 2^64-1 in a size_t
  OutputFlags check_outputs;
  add_output_flags(check, check_outputs);
  std::string static_text = "compile";
  check
      ->add_option(
          "--static", static_text,
          "compile: predict failures, then compile every cell (default); skip: do not compile "
          "cells predicted to fail")
      ->check(CLI::IsMember({"compile", "skip"}));
  bool static_only = false;
  check->add_flag("--static-only", static_only,
                  "Compile nothing: the matrix from the static pre-checks alone");
  std::string launch_text = "error";
  check
      ->add_option(
          "--launch-limits", launch_text,
          "error: a compiled cell that exceeds a launch limit of its target fails (default); warn: "
          "report it only")
      ->check(CLI::IsMember({"error", "warn"}));
  std::vector<std::string> triton_labels;
  check->add_option(
      "--triton", triton_labels,
      "Triton environments, comma-separated: current (the --python one) and versions such as "
      "3.8.0 (created on demand with env add)");
  bool no_inherit_site = false;
  check->add_flag("--no-inherit-site", no_inherit_site,
                  "Version environments do not see the invoking interpreter's site-packages");
  std::optional<std::filesystem::path> save_ir;
  check->add_option("--save-ir", save_ir,
                    "Keep every compiled cell's IR at every stage under DIR (for diff --ir)");
  std::string shard_text;
  check->add_option("--shard", shard_text,
                    "Compile only part K of N of the matrix (K/N), balanced by expected cost");
  check->add_flag("-q,--quiet", quiet, "No live progress line");
  std::string isolation = "fork";
  check
      ->add_option("--isolation", isolation,
                   "fork: one warm worker forks a child per cell (default); process: a fresh "
                   "interpreter per cell")
      ->check(CLI::IsMember({"fork", "process"}));
  bool no_cache = false;
  check->add_flag("--no-cache", no_cache,
                  "Compile every cell, neither reading nor writing the result cache");
  std::string worker_max_rss_text;
  check->add_option("--worker-max-rss", worker_max_rss_text,
                    "Replace the fork server when it grows beyond this (default 4GiB)");
  check->footer(kExitCodes);

  std::filesystem::path report_input;
  OutputFlags report_outputs;
  auto* report_cmd =
      app.add_subcommand("report", "Render a saved JSON report (or a merged one) in any format");
  report_cmd->add_option("report", report_input, "A JSON report written by check --json or merge")
      ->required();
  add_output_flags(report_cmd, report_outputs);
  report_cmd->footer(kExitCodes);

  std::vector<std::string> merge_inputs;
  std::filesystem::path merge_output;
  OutputFlags merge_outputs;
  auto* merge_cmd =
      app.add_subcommand("merge", "Combine the JSON reports of --shard runs into one");
  merge_cmd->add_option("reports", merge_inputs, "JSON reports of the shards")->required();
  merge_cmd->add_option("-o,--output", merge_output, "The merged JSON report")->required();
  add_output_flags(merge_cmd, merge_outputs);
  merge_cmd->footer(kExitCodes);

  CheckOptions export_options;
  std::vector<std::string> export_rows, export_targets;
  std::filesystem::path export_dir;
  std::string export_kernel, export_signature, export_constants, export_options_text;
  auto* export_cmd = app.add_subcommand("export",
                                        "Write each row's binary, assembly, launch descriptor and "
                                        "C++ launcher for the given targets");
  export_cmd->add_option("rows", export_rows, "Rows of the manifest to export (default: all)");
  export_cmd->add_option("-m,--manifest", export_options.manifest,
                         "Manifest file (default: portcheck.toml)");
  export_cmd->add_flag("--demo", export_options.demo, "Export rows of the bundled demo");
  export_cmd
      ->add_option("-t,--target,--targets", export_targets,
                   "Targets, comma-separated (cuda:90,hip:gfx942)")
      ->required();
  export_cmd
      ->add_option("-o,--output", export_dir,
                   "Folder to write into (one subfolder per row and target)")
      ->required();
  export_cmd->add_option("--python", export_options.python, "Python interpreter holding Triton");
  export_cmd->add_option(
      "--kernel", export_kernel,
      "Instead of a manifest: module:function or file.py:function, with --signature, "
      "--constants, --options as TOML inline tables");
  export_cmd->add_option("--signature", export_signature,
                         "e.g. '{ x_ptr = \"*fp32:16\", n = \"i32\" }'");
  export_cmd->add_option("--constants", export_constants, "e.g. '{ BLOCK = 1024 }'");
  export_cmd->add_option("--options", export_options_text, "e.g. '{ num_warps = 4 }'");
  export_cmd->footer(kExitCodes);

  auto* env_cmd =
      app.add_subcommand("env", "Triton releases in their own environments (for check --triton)");
  env_cmd->require_subcommand(1);
  std::string env_version, env_python;
  std::vector<std::string> env_with;
  auto* env_add = env_cmd->add_subcommand("add", "Create the environment of a Triton release");
  env_add->add_option("version", env_version, "A Triton release, such as 3.8.0")->required();
  env_add->add_option("--with", env_with, "More packages to install into it (torch, your package)");
  env_add->add_option("--python", env_python,
                      "The interpreter to create it with (default: python3)");
  auto* env_list =
      env_cmd->add_subcommand("list", "The environments: version, Python, size, path, last used");
  auto* env_remove =
      env_cmd->add_subcommand("remove", "Delete the environment of a Triton release");
  env_remove->add_option("version", env_version, "A Triton release")->required();
  env_cmd->footer(kExitCodes);

  std::vector<std::string> diff_inputs, diff_versions, diff_targets, diff_fail_on;
  double diff_time_ratio = 1.5, diff_time_min = 0.5, diff_size = 0.05;
  std::string diff_ir;
  auto* diff_cmd = app.add_subcommand(
      "diff", "Compare Triton versions or targets in one report, or two reports");
  diff_cmd
      ->add_option("reports", diff_inputs, "One JSON report (with --versions or --targets) or two")
      ->required()
      ->expected(1, 2);
  diff_cmd->add_option("--versions", diff_versions, "Two Triton labels of one report: old new")
      ->expected(2);
  diff_cmd->add_option("--targets", diff_targets, "Two targets of one report: old new")
      ->expected(2);
  diff_cmd->add_option("--time-threshold", diff_time_ratio,
                       "Slower to compile: at least this ratio (default 1.5)");
  diff_cmd->add_option("--time-min", diff_time_min,
                       "... and at least this many seconds more (default 0.5)");
  diff_cmd->add_option("--size-threshold", diff_size,
                       "Size and metadata changes from this fraction (default 0.05)");
  diff_cmd->add_option("--fail-on", diff_fail_on,
                       "Exit 1 when any of these is found: regressed,slower,changed,...");
  diff_cmd->add_option(
      "--ir", diff_ir,
      "Also show the normalised IR diff of changed cells at this stage (ttgir, ...)");
  diff_cmd->footer(kExitCodes);

  auto* cache_cmd = app.add_subcommand("cache", "Inspect or empty the result cache");
  cache_cmd->require_subcommand(1);
  auto* cache_stats =
      cache_cmd->add_subcommand("stats", "Entries, size and location of the result cache");
  auto* cache_clean = cache_cmd->add_subcommand("clean", "Remove every cached result");

  CaptureOptions capture_options;
  std::string capture_mode = "interpret";
  bool capture_append = false, capture_update = false;
  auto* capture_cmd = app.add_subcommand(
      "capture",
      "Run a command (your tests) and write a manifest row for every specialisation Triton "
      "compiles");
  capture_cmd->add_option("-o,--output", capture_options.output,
                          "Manifest to write (default: portcheck.toml)");
  capture_cmd
      ->add_option("--mode", capture_mode,
                   "interpret (default: CPU interpreter, tests pass), record (no GPU, kernels "
                   "not run), live (GPU: compiled and launched)")
      ->check(CLI::IsMember({"interpret", "record", "live"}));
  capture_cmd->add_flag("--append", capture_append,
                        "Add the captured rows an existing manifest lacks; keep everything");
  capture_cmd->add_flag("--update", capture_update,
                        "Replace the rows captured earlier for the kernels seen now; keep "
                        "hand-written rows, comments and xfail lists");
  capture_cmd->add_flag("--force", capture_options.force, "Overwrite an existing manifest");
  capture_cmd->add_flag("-q,--quiet", capture_options.quiet, "Only warnings and the summary");
  capture_cmd->add_option("command", capture_options.command,
                          "The command to run, after `--` (e.g. -- pytest tests/)");
  capture_cmd->footer(
      "Example: triton-portcheck capture -o portcheck.toml -- pytest tests/\n"
      "Exit codes: 0 written (in record mode also when the tests fail, as they do there); 1 "
      "nothing launched by a command that succeeded; 2 bad arguments or manifest; 130 "
      "interrupted. Otherwise a failing command's own status wins, rows written (interpret and "
      "live modes) or nothing launched: pytest's 2 when collection failed, 5 when no test was "
      "selected. So 2 may be pytest's too: the last line on stderr says which.");

  std::string targets_python;
  std::vector<std::string> targets_list;
  auto* targets =
      app.add_subcommand("targets", "Show the targets the installed Triton can compile for");
  targets->add_option("--python", targets_python, "Python interpreter holding Triton");
  targets->add_option("-t,--targets", targets_list,
                      "Targets to describe (default: the default targets)");

  if (const auto message = unknown_command(app, {argv + 1, argv + argc})) {
    std::fprintf(stderr, "triton-portcheck: %s\n", message->c_str());
    return exit_code::usage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    const bool capture_without_separator = !args.empty() && args.front() == "capture" &&
                                           std::find(args.begin(), args.end(), "--") == args.end();
    std::fprintf(stderr, "triton-portcheck: %s%s\n", e.what(),
                 capture_without_separator
                     ? ": put the command after `--`, as in `triton-portcheck capture -- pytest "
                       "-q tests/`"
                     : " (see --help)");
    return exit_code::usage;
  }

  install_interrupt_handler();
  try {
    if (*targets) return run_targets(targets_python, targets_list);
    if (*capture_cmd) {
      if (capture_append && capture_update)
        throw UsageError("--append and --update exclude each other");
      if (capture_options.force && (capture_append || capture_update))
        throw UsageError("--force overwrites the manifest; it excludes --append and --update");
      capture_options.mode = parse_capture_mode(capture_mode);
      capture_options.merge = capture_update   ? MergeMode::update
                              : capture_append ? MergeMode::append
                                               : MergeMode::create;
      return run_capture(capture_options);
    }
    if (*cache_cmd) return run_cache(*cache_stats ? "stats" : "clean");
    if (*report_cmd) return run_report_command(report_input, report_outputs);
    if (*env_cmd) {
      if (*env_add) return run_env_add(env_version, env_with, env_python);
      if (*env_list) return run_env_list();
      if (*env_remove) return run_env_remove(env_version);
    }
    if (*diff_cmd) {
      DiffOptions diff_options;
      diff_options.time_ratio = diff_time_ratio;
      diff_options.time_min_seconds = diff_time_min;
      diff_options.size_threshold = diff_size;
      return run_diff(diff_inputs, diff_versions, diff_targets, diff_options,
                      split_list(diff_fail_on), diff_ir);
    }
    if (*export_cmd) {
      export_options.targets = split_list(export_targets);
      export_options.only_rows = export_rows;
      export_options.export_dir = export_dir;
      return run_export_command(export_options, export_kernel, export_signature, export_constants,
                                export_options_text);
    }
    if (*merge_cmd) return run_merge_command(merge_inputs, merge_output, merge_outputs);
    if (!shard_text.empty()) {
      std::string error;
      options.shard = parse_shard(shard_text, &error);
      if (!options.shard) throw UsageError(error);
    }
    (void)cache_clean;
    // CLI::IsMember above admits only names the tables know.
    options.isolation = *parse_isolation(isolation);
    options.static_mode = static_only ? StaticMode::only : *parse_static_mode(static_text);
    options.launch_limits_warn = launch_text == "warn";
    options.triton = split_list(triton_labels);
    options.inherit_site = !no_inherit_site;
    options.save_ir_dir = save_ir;
    // The IR is written by the compile itself: cells served from the cache would leave none.
    options.use_cache = !no_cache && !save_ir;
    options.cache_max_bytes = cache_bound();
    if (!worker_max_rss_text.empty()) {
      const auto bytes = util::parse_byte_size(worker_max_rss_text);
      if (!bytes || *bytes == 0)
        throw UsageError(
            fmt::format("--worker-max-rss: '{}' is not a size such as 4GiB", worker_max_rss_text));
      options.worker_max_rss_bytes = *bytes;
    }
    options.targets = split_list(raw_targets);
    if (!timeout_text.empty()) {
      std::size_t used = 0;
      try {
        options.timeout_s = std::stod(timeout_text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != timeout_text.size())
        throw UsageError(fmt::format("--timeout: '{}' is not a number of seconds", timeout_text));
      if (const auto problem = timeout_problem(*options.timeout_s); !problem.empty())
        throw UsageError(fmt::format("--timeout {}: {}", timeout_text, problem));
    }
    if (!max_rss_text.empty()) {
      options.max_rss_bytes = util::parse_byte_size(max_rss_text);
      if (!options.max_rss_bytes || *options.max_rss_bytes == 0)
        throw UsageError(fmt::format("--max-rss: '{}' is not a size such as 8GiB", max_rss_text));
    }
    if (options.demo && check->count("--manifest") > 0)
      throw UsageError("--demo and --manifest exclude each other");
    return run_check_command(options, check_outputs, quiet);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "triton-portcheck: %s\n", e.what());
    return exit_code::usage;
  } catch (const EnvironmentError& e) {
    std::fprintf(stderr, "triton-portcheck: %s\n", e.what());
    return exit_code::environment;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "triton-portcheck: internal error: %s\n", e.what());
    return exit_code::internal;
  }
}
