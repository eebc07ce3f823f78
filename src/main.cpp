#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "src/cache.hpp"
#include "src/check.hpp"
#include "src/envs.hpp"
#include "src/errors.hpp"
#include "src/report_json.hpp"
#include "src/report_terminal.hpp"
#include "src/targets.hpp"
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

// "-t cuda:80,cuda:90 -t hip:gfx942" -> three names
std::vector<std::string> split_targets(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const auto& item : raw)
    for (const auto& part : util::split(item, ','))
      if (!util::trim(part).empty()) out.emplace_back(util::trim(part));
  return out;
}

int run_targets(const std::string& python_flag, const std::vector<std::string>& raw_targets) {
  using namespace portcheck;
  auto names = split_targets(raw_targets);
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
  return exit_code::ok;
}

// A report that cannot be written is known before anything compiles, not after.
void check_writable_destination(const std::filesystem::path& file, const char* flag) {
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(
        fmt::format("{} {}: the folder {} does not exist", flag, file.string(), dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{} {}: the folder {} is not writable", flag, file.string(), dir.string()));
  if (std::filesystem::is_directory(file, ec))
    throw UsageError(fmt::format("{} {}: is a folder, not a file", flag, file.string()));
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

int run_check_command(CheckOptions options, bool quiet) {
  options.progress = !quiet && util::is_terminal(stderr);
  if (options.json_path) check_writable_destination(*options.json_path, "--json");
  const auto report = run_check(options, g_interrupted);
  int code = exit_code_for(report);
  // Reports first, atomically, so an interrupted run still leaves whole files behind.
  std::string write_error;
  try {
    if (options.json_path)
      util::atomic_write_file(*options.json_path, report_to_json(report).dump(2) + "\n");
  } catch (const std::exception& e) {
    write_error = e.what();
  }
  std::fputs(render_terminal(report, TerminalStyle{util::use_colour(stdout)}).c_str(), stdout);
  std::fflush(stdout);
  if (!write_error.empty()) {
    std::fprintf(stderr, "triton-portcheck: %s\n", write_error.c_str());
    code = exit_code::environment;
  }
  return code;
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
  check->add_option("--python", options.python,
                    "Python interpreter holding Triton (default: $VIRTUAL_ENV, else python3)");
  check->add_option("--timeout", timeout_text,
                    "Seconds per cell, whole process tree (overrides the manifest)");
  check->add_option("--max-rss", max_rss_text,
                    "Memory per cell, whole process tree, e.g. 8GiB (overrides the manifest)");
  check->add_option("-j,--jobs", options.jobs, "Cells compiled at once (default: number of cores)");
  check->add_option("--json", options.json_path,
                    "Write the JSON report (docs/report-schema.md) to FILE");
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

  auto* cache_cmd = app.add_subcommand("cache", "Inspect or empty the result cache");
  cache_cmd->require_subcommand(1);
  auto* cache_stats =
      cache_cmd->add_subcommand("stats", "Entries, size and location of the result cache");
  auto* cache_clean = cache_cmd->add_subcommand("clean", "Remove every cached result");

  std::string targets_python;
  std::vector<std::string> targets_list;
  auto* targets =
      app.add_subcommand("targets", "Show the targets the installed Triton can compile for");
  targets->add_option("--python", targets_python, "Python interpreter holding Triton");
  targets->add_option("-t,--targets", targets_list,
                      "Targets to describe (default: the default targets)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "triton-portcheck: %s (see --help)\n", e.what());
    return exit_code::usage;
  }

  install_interrupt_handler();
  try {
    if (*targets) return run_targets(targets_python, targets_list);
    if (*cache_cmd) return run_cache(*cache_stats ? "stats" : "clean");
    (void)cache_clean;
    options.isolation = isolation == "process" ? Isolation::process : Isolation::fork;
    options.use_cache = !no_cache;
    options.cache_max_bytes = cache_bound();
    if (!worker_max_rss_text.empty()) {
      const auto bytes = util::parse_byte_size(worker_max_rss_text);
      if (!bytes || *bytes == 0)
        throw UsageError(
            fmt::format("--worker-max-rss: '{}' is not a size such as 4GiB", worker_max_rss_text));
      options.worker_max_rss_bytes = *bytes;
    }
    options.targets = split_targets(raw_targets);
    if (!timeout_text.empty()) {
      try {
        options.timeout_s = std::stod(timeout_text);
      } catch (const std::exception&) {
        throw UsageError(fmt::format("--timeout: '{}' is not a number of seconds", timeout_text));
      }
      if (!(*options.timeout_s > 0)) throw UsageError("--timeout: must be greater than 0");
    }
    if (!max_rss_text.empty()) {
      options.max_rss_bytes = util::parse_byte_size(max_rss_text);
      if (!options.max_rss_bytes || *options.max_rss_bytes == 0)
        throw UsageError(fmt::format("--max-rss: '{}' is not a size such as 8GiB", max_rss_text));
    }
    if (options.demo && check->count("--manifest") > 0)
      throw UsageError("--demo and --manifest exclude each other");
    return run_check_command(options, quiet);
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
