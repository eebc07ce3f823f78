// `env add|list|remove`: the Triton releases `check --triton` compiles with, one venv each.
#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/run/python_worker.hpp"
#include "src/versions/environments.hpp"
#include "util/strings.hpp"

namespace portcheck::cli {
namespace {

struct EnvFlags {
  std::string version, python;
  std::vector<std::string> with;
};

int run_env_add(const EnvFlags& f) {
  validate_compilable_release(f.version, "env add");
  const auto base = resolve_python(f.python.empty() ? "python3" : f.python);
  const auto added = add_environment(f.version, split_list(f.with), base);
  if (added.already_present) {
    fmt::print("triton {} is already installed at {} ({})\n", f.version, added.path.string(),
               util::format_bytes(added.actual_bytes));
    if (!added.installed_packages.empty())
      fmt::print("installed into it: {}\n", util::join(added.installed_packages, " "));
    return exit_code::ok;
  }
  fmt::print("triton {}: wheel {}, expected on disk {}, actual {}\n  {}\n", f.version,
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

int run_env_remove(const EnvFlags& f) {
  validate_version(f.version);
  if (!remove_environment(f.version))
    throw UsageError(fmt::format("env remove {}: no such environment", f.version));
  fmt::print("removed the environment of triton {}\n", f.version);
  return exit_code::ok;
}

}  // namespace

Command add_env_command(CLI::App& app) {
  auto flags = std::make_shared<EnvFlags>();
  auto* env =
      app.add_subcommand("env", "Triton releases in their own environments (for check --triton)");
  env->require_subcommand(1);
  auto* add = env->add_subcommand("add", "Create the environment of a Triton release");
  add->add_option("version", flags->version, "A Triton release, such as 3.8.0")->required();
  add->add_option("--with", flags->with,
                  "More packages to install into it (torch, your package); into an existing "
                  "environment too");
  add->add_option("--python", flags->python,
                  "The interpreter to create it with (default: python3)");
  auto* list =
      env->add_subcommand("list", "The environments: version, Python, size, path, last used");
  auto* remove = env->add_subcommand("remove", "Delete the environment of a Triton release");
  remove->add_option("version", flags->version, "A Triton release")->required();
  env->footer(kExitCodes);
  // require_subcommand(1): exactly one of the three was given.
  return {env, [flags, add, list] {
            if (*add) return run_env_add(*flags);
            if (*list) return run_env_list();
            return run_env_remove(*flags);
          }};
}

}  // namespace portcheck::cli
