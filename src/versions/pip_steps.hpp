#pragma once
// The child processes `env add` runs (python -m venv, pip download, pip install, the import
// check), each supervised with a timeout and its output kept, and the one line that says why one
// failed.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
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

// Runs argv in `logs` (its output in <logs>/<name>.stdout and .stderr) with the parent's
// environment less what could point the child Python elsewhere (PYTHONPATH, PYTHONHOME,
// VIRTUAL_ENV), pip never prompting.
StepResult run_step(const std::vector<std::string>& argv, const std::filesystem::path& logs,
                    const std::string& name, std::chrono::seconds timeout);

// Why a step failed, in one line: pip's ERROR line (or the last line of stderr), the network
// cause of pip's retries, a timeout, a signal.
std::string failure_reason(const StepResult& step, std::chrono::seconds timeout);

// "(from versions: 2.0.0, 2.1.0, 3.8.0)" in pip's "Could not find a version" error.
std::optional<std::vector<std::string>> offered_versions(const std::string& stderr_text);

}  // namespace portcheck
