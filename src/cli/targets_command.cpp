// `triton-portcheck targets`: what the installed Triton can compile for, and the tables the static
// pre-checks and the launch-limit check read for each target.
#include <variant>

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
#include "util/strings.hpp"

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
void print_targets(const ProbeAnswer& probe) {
  fmt::print("triton {} at {}\npython {} ({})\n", probe.triton_version, probe.triton_path,
             probe.python_version, probe.python_executable);
  std::string backends;
  for (const auto& [name, fields] : probe.option_fields)
    backends += (backends.empty() ? "" : ", ") + name;
  fmt::print("backends: {}\n\n", backends);
  fmt::print("{:<14}{:<11}{}\n", "target", "warp size", "assembler");
  for (const auto& t : probe.targets) {
    if (t.error) {
      fmt::print("{:<14}{:<11}{}\n", t.name, "-", "cannot compile: " + *t.error);
      continue;
    }
    // ptxas answers "CUDA 12.4, V12.4.99"; an ld.lld (AMD, Triton before 3.4) its LLD version.
    const auto version = t.assembler_version.value_or("?");
    const std::string assembler =
        t.assembler_path
            ? fmt::format("{} ({}{})", std::filesystem::path(*t.assembler_path).filename().string(),
                          t.backend == "cuda" ? "CUDA " : "", version)
            : version;
    fmt::print("{:<14}{:<11}{}\n", t.name,
               t.warp_size ? std::to_string(*t.warp_size) : std::string("?"), assembler);
  }
}

// The tables the static pre-checks and the launch-limit check use, per target.
void print_check_tables(const StaticTables& tables, const std::vector<std::string>& names,
                        const ShareDirs& share) {
  fmt::print("\nstatic pre-checks, read from this Triton: libdevice functions: {}\n", [&] {
    std::string out;
    for (const auto& [backend, fns] : tables.libdevice)
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
    if (const auto it = tables.fp8.find(n); it != tables.fp8.end())
      if (const auto* dtypes = std::get_if<std::vector<std::string>>(&it->second))
        fp8 = util::join(*dtypes, ",");
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
  std::vector<std::string> compilable;
  for (const auto& t : probe.targets) {
    if (!t.unsupported) {
      compilable.push_back(t.name);
    } else if (!is_shipped_target(t.name)) {
      throw UsageError(fmt::format("{}: {}",
                                   f.targets.empty() ? "the default targets" : "--targets",
                                   target_problem(t, probe.triton_version)));
    }
  }
  // The request asked for the tables (predict): a probe answer without them is not this one.
  print_check_tables(probe.static_tables.value_or(StaticTables{}), compilable, share);
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
