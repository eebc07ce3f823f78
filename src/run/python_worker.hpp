#pragma once
// The Python side of a run, as the tool starts it: which interpreter, with what environment, and
// the probe of what that interpreter's Triton offers.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/tool_files.hpp"
#include "src/run/probe_answer.hpp"
#include "src/run/process_runner.hpp"

namespace portcheck {

// The interpreter holding the Triton under test: --python, else $VIRTUAL_ENV, else the environment
// the tool is installed in when it has Triton, else python3 on PATH.
std::string resolve_python(const std::string& explicit_python);

// The environment a worker process runs with, its files under `scratch` (the run's folder):
// Triton's cache in <scratch>/triton-cache, and TMPDIR <scratch>/tmp (made here), so that the
// temporary files Triton and ptxas write (/tmp/tmpXXXX.ptx, .o, .log, kept on a kill) go when
// the run's folder goes, even when the run is SIGKILLed (the death watch removes it).
std::vector<std::string> worker_environment(const ShareDirs& share,
                                            const std::filesystem::path& scratch,
                                            const std::vector<std::string>& extra_pythonpath = {});

// The probe is the handshake: its request carries worker_protocol_version() (worker_protocol.hpp:
// the worker refuses another, exit 3), and its answer is checked here. Both probe paths
// (probe_environment and the fork server's) go through with_protocol and checked_probe_answer.
nlohmann::json with_protocol(nlohmann::json probe_request);
// Throws EnvironmentError, with the fix, unless the answer speaks this binary's protocol.
void check_worker_protocol(const nlohmann::json& probe_answer);
// check_worker_protocol, then the answer read as the schema's probe_answer (ProtocolError).
ProbeAnswer checked_probe_answer(const nlohmann::json& probe_answer);

// What to do when Triton does not import from `python`: install it there, or name an
// environment that has it; from a checkout (`checkout` not empty), `make demo` too.
std::string missing_triton_fix(const std::string& python, const std::filesystem::path& checkout);

// The EnvironmentError for a probe that did not answer: Triton missing (the worker exits 3), a
// worker of another protocol (exit 3 too, its line says so), an interpreter that cannot start,
// or a worker that died.
[[noreturn]] void throw_probe_failure(const std::string& python, const ProcessOutcome& outcome,
                                      const std::string& stderr_text);

// Runs the worker's probe: Python and Triton versions, backend option fields, target details.
// Throws EnvironmentError with the fix when Triton is missing or broken, or the worker speaks
// another protocol.
ProbeAnswer probe_environment(const std::string& python, const ShareDirs& share,
                              const std::filesystem::path& scratch, const nlohmann::json& request);

}  // namespace portcheck
