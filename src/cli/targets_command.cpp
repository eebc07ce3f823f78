// `triton-portcheck targets`: what the installed Triton can compile for, and the tables the static
// pre-checks and the launch-limit check read for each target.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/check/launch_limits.hpp"
#include "src/check/triton_validation.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/core/target.hpp"
#include "src/core/tool_files.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/scratch_dir.hpp"
#include "util/fs.hpp"

namespace portcheck::cli {
namespace {

struct TargetsFlags {
  std::string python;
  std::vector<std::string> targets;
};

// The probe's request: the targets, and the static tables (no cells, so no keys).
nlohmann::json targets_request(const std::vector<std::string>& names) {
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
  return request;
}

// Triton, Python, the backends, and each target's warp size and assembler.
void print_targets(const nlohmann::json& probe) {
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
    // ptxas answers "CUDA 12.4, V12.4.99"; an ld.lld (AMD, Triton before 3.4) its LLD version.
    const auto backend = t.value("backend", "");
    std::string assembler =
        as["path"].is_string()
            ? fmt::format("{} ({}{})",
                          std::filesystem::path(as["path"].get<std::string>()).filename().string(),
                          backend == "cuda" ? "CUDA " : "", as["version"].get<std::string>())
            : as["version"].get<std::string>();
    fmt::print("{:<14}{:<11}{}\n", t["name"].get<std::string>(), t["warp_size"].get<int>(),
               assembler);
  }
}

// The tables the static pre-checks and the launch-limit check use, per target.
void print_check_tables(const nlohmann::json& probe, const std::vector<std::string>& names,
                        const ShareDirs& share) {
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
  const auto show = [](const std::optional<std::uint64_t>& v) {
    return v ? std::to_string(*v) : std::string("-");
  };
  for (const auto& n : names) {
    const auto t = checked_target(n);
    std::string fp8 = "?";
    if (tables["fp8"].contains(n) && tables["fp8"][n].is_array()) {
      fp8.clear();
      for (const auto& d : tables["fp8"][n]) fp8 += (fp8.empty() ? "" : ",") + d.get<std::string>();
    }
    const auto l = limits.for_target(t);
    if (!l) {
      fmt::print("{:<14}{:<36}{}\n", n, fp8, "(not in the launch-limit table: not checked)");
      continue;
    }
    fmt::print("{:<14}{:<36}{:<9}{:<13}{:<11}{}\n", n, fp8, show(l->max_threads_per_block),
               show(l->max_shared_bytes_per_block), show(l->max_registers_per_block),
               show(l->max_cluster_size));
  }
}

int run_targets(const TargetsFlags& f) {
  auto names = split_list(f.targets);
  if (names.empty()) names = default_target_names();
  const auto request = targets_request(names);
  const auto share = ShareDirs::locate();
  const auto python = resolve_python(f.python);
  const ScratchDir scratch("triton-portcheck-targets");
  const auto probe = probe_environment(python, share, scratch.path(), request);
  print_targets(probe);
  // The tables need a target Triton can compile for; a bad one is the user's to fix, exit 2. A
  // shipped target this release cannot compile for is said above ("cannot compile") and left out.
  const auto version = probe["triton"]["version"].get<std::string>();
  std::vector<std::string> compilable;
  for (const auto& t : probe["targets"]) {
    const auto name = t["name"].get<std::string>();
    if (!t.contains("unsupported")) {
      compilable.push_back(name);
    } else if (!is_shipped_target(name)) {
      throw UsageError(fmt::format("{}: {}",
                                   f.targets.empty() ? "the default targets" : "--targets",
                                   target_problem(t, version)));
    }
  }
  print_check_tables(probe, compilable, share);
  return exit_code::ok;
}

}  // namespace

Command add_targets_command(CLI::App& app) {
  auto flags = std::make_shared<TargetsFlags>();
  auto* targets =
      app.add_subcommand("targets", "Show the targets the installed Triton can compile for");
  targets->add_option("--python", flags->python, "Python interpreter holding Triton");
  targets->add_option("-t,--targets", flags->targets,
                      "Targets to describe (default: the default targets)");
  return {targets, [flags] { return run_targets(*flags); }};
}

}  // namespace portcheck::cli
