#pragma once
// The Python side of a run, as the tool starts it: which interpreter, with what environment, and
// the probe of what that interpreter's Triton offers.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/tool_files.hpp"
#include "src/run/process_runner.hpp"

namespace portcheck {

// The interpreter holding the Triton under test: --python, else $VIRTUAL_ENV, else the environment
// the tool is installed in when it has Triton, else python3 on PATH.
std::string resolve_python(const std::string& explicit_python);

// The environment a worker process runs with.
std::vector<std::string> worker_environment(const ShareDirs& share,
                                            const std::filesystem::path& triton_cache,
                                            const std::vector<std::string>& extra_pythonpath = {});

// Throws the EnvironmentError for a probe that did not answer: Triton missing (the worker exits
// 3), an interpreter that cannot start, or a worker that died. The fork server throws it too
// when it cannot start.
[[noreturn]] void throw_probe_failure(const std::string& python, const ProcessOutcome& outcome,
                                      const std::string& stderr_text);

// Runs the worker's probe: Python and Triton versions, backend option fields, target details,
// and the argument names of each kernel. `request` says what to probe (targets, kernels, cells;
// python/portcheck_worker/__main__.py reads it); its file, the answer and the probe's output go
// in `scratch`. Throws EnvironmentError with the fix when Triton is missing or broken.
nlohmann::json probe_environment(const std::string& python, const ShareDirs& share,
                                 const std::filesystem::path& scratch,
                                 const nlohmann::json& request);

}  // namespace portcheck
