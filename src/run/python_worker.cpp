#include "src/run/python_worker.hpp"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/core/tool_files.hpp"
#include "src/run/scratch_dir.hpp"
#include "src/run/supervisor.hpp"
#include "src/run/worker_channels.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace portcheck {
namespace {

// The interpreter of the environment the tool is installed in (<prefix>/bin/triton-portcheck next
// to <prefix>/bin/python), when that environment has Triton: `pip install triton-portcheck` into
// the venv that holds Triton then needs neither activation nor --python. The check looks for the
// package folder rather than importing it, to keep start-up free of a Python launch.
// The interpreter beside the tool (<prefix>/bin/python), Triton or not; empty when none.
std::string interpreter_beside_the_tool() {
  const auto bin = executable_dir();
  if (bin.empty()) return {};
  const auto python = bin / "python";
  return ::access(python.c_str(), X_OK) == 0 ? python.string() : std::string();
}

std::string installed_environment_python() {
  auto python = interpreter_beside_the_tool();
  if (python.empty()) return {};
  const auto bin = executable_dir();
  std::error_code ec;
  for (const auto& lib : {bin / ".." / "lib", bin / ".." / "lib64"}) {
    for (std::filesystem::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->path().filename().string().starts_with("python")) continue;
      if (std::filesystem::exists(it->path() / "site-packages" / "triton" / "__init__.py"))
        return python;
    }
  }
  return {};
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  for (const auto& dir : util::split(path, ':')) {
    if (dir.empty()) continue;
    const auto candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

// The worker's one line when it refuses a request of another protocol, after "portcheck-worker: "
// (python/portcheck_worker/base/protocol.py, check_tool_protocol).
constexpr std::string_view kProtocolRefusal = "protocol mismatch: ";

// Where the files of another install most often come from: a TRITON_PORTCHECK_SHARE left set.
std::string share_hint() {
  const char* share = std::getenv("TRITON_PORTCHECK_SHARE");
  if (share == nullptr || *share == '\0') return "";
  return fmt::format(" (or unset TRITON_PORTCHECK_SHARE, which points at {})", share);
}

}  // namespace

std::string resolve_python(const std::string& explicit_python) {
  if (!explicit_python.empty()) {
    const auto found = explicit_python.find('/') == std::string::npos
                           ? find_on_path(explicit_python)
                           : explicit_python;
    if (found.empty() || ::access(found.c_str(), X_OK) != 0)
      throw EnvironmentError(
          fmt::format("--python {}: no such executable interpreter", explicit_python));
    // Cells run in the kernel's folder, so a relative path must be made absolute; symlinks are
    // kept, since a venv's python finds its site-packages through its own path.
    return std::filesystem::absolute(found).lexically_normal().string();
  }
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
    const auto python = std::filesystem::path(venv) / "bin" / "python";
    if (::access(python.c_str(), X_OK) == 0) return python.string();
    throw EnvironmentError(
        fmt::format("$VIRTUAL_ENV is {} but it has no bin/python: activate a working "
                    "environment or pass --python",
                    venv));
  }
  if (auto installed = installed_environment_python(); !installed.empty()) return installed;
  auto python = find_on_path("python3");
  if (python.empty())
    throw EnvironmentError(
        "no python3 on PATH: install Python 3 with Triton, or pass --python /path/to/python");
  return python;
}

std::vector<std::string> worker_environment(const ShareDirs& share,
                                            const std::filesystem::path& scratch,
                                            const std::vector<std::string>& extra_pythonpath) {
  const auto tmp = scratch / "tmp";
  std::error_code ec;
  // Python ignores a TMPDIR that does not exist (and falls back to /tmp): make it.
  std::filesystem::create_directories(tmp, ec);
  const bool own_tmp = !ec;
  std::vector<std::string> env;
  std::string pythonpath = share.worker.string();
  for (const auto& p : extra_pythonpath) pythonpath += ":" + p;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("PYTHONPATH=")) {
      if (entry.size() > 11) pythonpath += ":" + std::string(entry.substr(11));
      continue;
    }
    // Our own settings win: a user's cache dir must not serve compiles we are timing.
    if (entry.starts_with("TRITON_CACHE_DIR=") || entry.starts_with("PYTHONUNBUFFERED=") ||
        entry.starts_with("PYTHONDONTWRITEBYTECODE=") || (own_tmp && entry.starts_with("TMPDIR=")))
      continue;
    env.emplace_back(entry);
  }
  env.push_back("PYTHONPATH=" + pythonpath);
  env.push_back("TRITON_CACHE_DIR=" + (scratch / "triton-cache").string());
  if (own_tmp) env.push_back("TMPDIR=" + tmp.string());
  env.push_back("PYTHONUNBUFFERED=1");
  env.push_back("PYTHONDONTWRITEBYTECODE=1");
  // What the folder's death watch (ScratchDir) kills should the tool die.
  env.push_back(scratch_marker(scratch));
  // The process the cells' seccomp guard protects, with its ancestors
  // (python/portcheck_worker/base/signal_guard.py): the tool is a subreaper, so a cell's process
  // whose parent died is re-parented here, and its next kill(getppid()) must not end the run.
  env.push_back(fmt::format("{}={}", channels::kToolPid, ::getpid()));
  return env;
}

nlohmann::json with_protocol(nlohmann::json probe_request) {
  probe_request["protocol"] = worker_protocol_version();
  return probe_request;
}

void check_worker_protocol(const nlohmann::json& probe_answer) {
  const auto& spoken = probe_answer.contains("protocol") ? probe_answer["protocol"] : nullptr;
  if (spoken.is_number_integer() && spoken.get<long long>() == worker_protocol_version()) return;
  throw EnvironmentError(fmt::format(
      "protocol mismatch: triton-portcheck speaks protocol {}, its worker at {} speaks {}: the "
      "binary and the worker files come from different installs; reinstall triton-portcheck{}",
      worker_protocol_version(),
      probe_answer.contains("worker") && probe_answer["worker"].is_string()
          ? probe_answer["worker"].get<std::string>()
          : std::string("(unknown)"),
      spoken.is_null() ? std::string("none") : spoken.dump(), share_hint()));
}

ProbeAnswer checked_probe_answer(const nlohmann::json& probe_answer) {
  check_worker_protocol(probe_answer);
  return ProbeAnswer::read(probe_answer);
}

std::string missing_triton_fix(const std::string& python, const std::filesystem::path& checkout) {
  // Installed into a venv that has no Triton, and run without activating it: the tool fell back
  // to python3 on PATH, but the environment to complete is its own, which it would then use.
  if (const auto beside = interpreter_beside_the_tool(); !beside.empty() && beside != python)
    return fmt::format(
        "install it into the environment triton-portcheck is installed in, which it then uses "
        "without activation: `{} -m pip install triton`, or give --python (or $VIRTUAL_ENV) an "
        "environment that has it",
        beside);
  std::string fix = fmt::format(
      "install it into that environment with `{} -m pip install triton`, or give --python (or "
      "$VIRTUAL_ENV) an environment that has it",
      python);
  if (!checkout.empty())
    fix += fmt::format("; in this checkout ({}), `make demo` sets up .venv with Triton and uses it",
                       checkout.string());
  return fix;
}

void throw_probe_failure(const std::string& python, const ProcessOutcome& outcome,
                         const std::string& stderr_text) {
  constexpr std::string_view worker_prefix = "portcheck-worker: ";
  std::string last;
  for (const auto& line : util::split_lines(stderr_text))
    if (!util::trim(line).empty()) last = std::string(util::trim(line));
  if (outcome.how == Termination::spawn_failed)
    throw EnvironmentError(
        fmt::format("{} (pass --python with a working interpreter)", outcome.spawn_error));
  if (outcome.how == Termination::exited && outcome.exit_code == channels::kExitEnvironment) {
    // The worker's own line: Triton does not import, or the request speaks another protocol.
    const auto said = last.starts_with(worker_prefix) ? last.substr(worker_prefix.size()) : last;
    if (said.starts_with(kProtocolRefusal)) throw EnvironmentError(said + share_hint());
    // A release too old for the worker: pip install would not help; the line says what would.
    if (said.find(" is older than ") != std::string::npos)
      throw EnvironmentError(fmt::format("{}: {}", python, said));
    throw EnvironmentError(fmt::format("Triton is not usable from {} ({}): {}", python, said,
                                       missing_triton_fix(python, checkout_root())));
  }
  throw EnvironmentError(
      fmt::format("probing the Python environment {} failed{}: check that it runs "
                  "and that Triton imports in it",
                  python, last.empty() ? "" : ": " + last));
}

ProbeAnswer probe_environment(const std::string& python, const ShareDirs& share,
                              const std::filesystem::path& scratch, const nlohmann::json& request) {
  const auto request_path = scratch / "probe-request.json";
  const auto result_path = scratch / "probe-result.json";
  util::atomic_write_file(request_path, with_protocol(request).dump());
  ProcessSpec spec;
  spec.argv = {python,
               "-m",
               std::string(channels::kWorkerModule),
               std::string(channels::kProbeCommand),
               request_path.string(),
               result_path.string()};
  spec.env = worker_environment(share, scratch);
  spec.cwd = std::filesystem::current_path();
  spec.stdout_path = scratch / "probe.stdout";
  spec.stderr_path = scratch / "probe.stderr";
  spec.timeout = std::chrono::seconds(300);
  Supervisor supervisor;
  supervisor.start(0, spec);
  std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> ended;
  while (ended.empty()) ended = supervisor.wait(std::chrono::milliseconds(200));
  const auto& outcome = ended.front().second;
  if (outcome.how != Termination::exited || outcome.exit_code != 0 ||
      !std::filesystem::exists(result_path))
    throw_probe_failure(python, outcome,
                        util::read_file_bounded(spec.stderr_path, 4000).value_or(""));
  return checked_probe_answer(nlohmann::json::parse(util::read_file(result_path)));
}

}  // namespace portcheck
