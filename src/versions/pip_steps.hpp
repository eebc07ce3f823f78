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

}  // namespace portcheck
