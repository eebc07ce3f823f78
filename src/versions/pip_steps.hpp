#pragma once
// One step of `env add` (a venv, a pip install) run under the supervisor, and what its output says
// when it fails: pip's error, the cause of a network failure, the releases the index offers.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/run/process_runner.hpp"

namespace portcheck {

struct StepResult {
  ProcessOutcome outcome;
  std::string stdout_text;
  std::string stderr_text;
  [[nodiscard]] bool ok() const {
    return outcome.how == Termination::exited && outcome.exit_code == 0;
  }
};

// The parent's environment less what could point the child Python somewhere else.
std::vector<std::string> child_environment();

// What every step of one `env add` carries in its environment, so that the death watch finds
// venv and pip (and what they start) if the tool is killed.
std::string step_marker();

// Runs `argv` with its output in `logs`/<name>.stdout and .stderr, within `timeout`.
StepResult run_step(const std::vector<std::string>& argv, const std::filesystem::path& logs,
                    const std::string& name, std::chrono::seconds timeout);

// The readable cause in one of pip's retry warnings ("Failed to establish a new connection: ...").
std::optional<std::string> network_cause(std::string_view line);

// Why a step failed, in one line: pip's ERROR line (or the last line of stderr), a timeout, ...
std::string failure_reason(const StepResult& step, std::chrono::seconds timeout);

// "(from versions: 2.0.0, 2.1.0, 3.8.0)" in pip's "Could not find a version" error.
std::optional<std::vector<std::string>> offered_versions(const std::string& stderr_text);

// Whether `pip --version`'s line ("pip 25.3 from /x/pip (python 3.11)") names a pip that can aim
// at another interpreter (`pip --python`, pip 22.3 and later).
bool pip_aims_elsewhere(std::string_view pip_version_line);

// Whose pip an environment's steps run. The invoking Python's own, aimed at the environment's
// interpreter, where it can be: the environment then needs no pip of its own, whose install
// (ensurepip, with its bytecode) was 4.9 of the 12.2 CPU-s of `env add 3.1.0`
// (bench/env_add_cpu.sh). Else the environment's own pip, installed by ensurepip.
struct PipRunner {
  std::string outer_python;  // empty: the environment's own pip
  std::string env_python;
  // `python -m pip [--python ENV] VERB`
  [[nodiscard]] std::vector<std::string> command(const std::string& verb) const;
};

// The PipRunner for `env_python`: the invoking `python`'s pip when `python -m pip --version`
// says it can aim elsewhere (asked once, with its output in `logs`), else the environment's.
PipRunner pip_runner_for(const std::string& python, const std::string& env_python,
                         const std::filesystem::path& logs);

}  // namespace portcheck
