#include "src/capture/capture.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "src/capture/capture_rows.hpp"
#include "src/capture/gpu_devices.hpp"
#include "src/capture/personas.hpp"
#include "src/capture/vendor_tools.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/scratch_dir.hpp"
#include "src/run/worker_channels.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"
#include "util/unique_fd.hpp"

extern char** environ;

namespace portcheck {

namespace {

// The spelling of each mode, as --mode takes it and the hook reads it.
constexpr std::array<std::pair<CaptureMode, std::string_view>, 3> kModeNames = {{
    {CaptureMode::interpret, "interpret"},
    {CaptureMode::record, "record"},
    {CaptureMode::live, "live"},
}};

std::string_view mode_name(CaptureMode mode) {
  for (const auto& [value, name] : kModeNames)
    if (value == mode) return name;
  return "interpret";
}

// Python imports `sitecustomize` from the first sys.path entry that has one; ours comes first
// on PYTHONPATH and hands over to whichever one it shadows.
constexpr const char* kSiteCustomize =
    "# Written by triton-portcheck capture for one run (portcheck_worker/capture/hook.py).\n"
    "try:\n"
    "    from portcheck_worker.capture import hook as _portcheck_capture\n"
    "except Exception as _error:\n"
    "    import sys\n"
    "    sys.stderr.write(f\"triton-portcheck capture: cannot load the hook: {_error}\\n\")\n"
    "else:\n"
    "    _portcheck_capture.run_sitecustomize()\n";

std::vector<std::string> capture_environment(const std::filesystem::path& hook_dir,
                                             const std::filesystem::path& launches_dir,
                                             const std::filesystem::path& worker_dir,
                                             const CaptureOptions& options,
                                             const std::string& persona,
                                             const std::string& marker) {
  // A persona's run finds the vendors' tools as its device answers them first on PATH.
  const bool vendor_tools = !persona.empty();
  const CaptureMode mode = options.mode;
  std::vector<std::string> env;
  std::string pythonpath = hook_dir.string() + ":" + worker_dir.string();
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("PYTHONPATH=")) {
      if (entry.size() > 11) {
        pythonpath += ':';
        pythonpath += entry.substr(11);
      }
      continue;
    }
    // Interpret mode needs the interpreter; the others must not have it, or no JIT runs.
    if (entry.starts_with("TRITON_INTERPRET=") || entry.starts_with(channels::kCapturePrefix))
      continue;
    if (vendor_tools && entry.starts_with("PATH=")) continue;
    env.emplace_back(entry);
  }
  if (vendor_tools) env.push_back(path_with_vendor_tools(hook_dir / "bin"));
  env.push_back("PYTHONPATH=" + pythonpath);
  env.push_back(fmt::format("{}={}", channels::kCaptureDir, launches_dir.string()));
  env.push_back(fmt::format("{}={}", channels::kCaptureMode, mode_name(mode)));
  env.push_back(fmt::format("{}={}", channels::kCaptureHookDir, hook_dir.string()));
  if (mode == CaptureMode::interpret) env.push_back("TRITON_INTERPRET=1");
  if (!persona.empty()) env.push_back(fmt::format("{}={}", channels::kCapturePersona, persona));
  if (options.fake_gpu) env.push_back(fmt::format("{}=1", channels::kCaptureFakeGpu));
  // The command and what it starts end with the tool: a SIGKILLed capture leaves nothing running.
  env.push_back(marker);
  return env;
}

struct CommandOutcome {
  int exit_code = 0;
  bool interrupted = false;
};

// Runs the command in the foreground, sharing the terminal: Ctrl-C reaches it as it would
// without us, and we wait for it like system() does.
CommandOutcome run_command(const std::vector<std::string>& command,
                           const std::vector<std::string>& env) {
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  util::UniqueFd read_end(error_pipe[0]);
  util::UniqueFd write_end(error_pipe[1]);
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  struct sigaction old_int {
  }, old_quit{};
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, nullptr);
    ::environ = envp.data();
    ::execvp(argv[0], argv.data());
    const int err = errno;
    [[maybe_unused]] auto n = ::write(write_end.get(), &err, sizeof err);
    ::_exit(127);
  }
  write_end.reset();
  if (pid < 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  }
  int exec_errno = 0;
  const auto got = ::read(read_end.get(), &exec_errno, sizeof exec_errno);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (got == static_cast<ssize_t>(sizeof exec_errno))
    throw UsageError(
        fmt::format("cannot run '{}': {}", command.front(), std::strerror(exec_errno)));
  CommandOutcome outcome;
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.interrupted = WTERMSIG(status) == SIGINT;
    outcome.exit_code = 128 + WTERMSIG(status);
  }
  return outcome;
}

std::string quoted_command(const std::vector<std::string>& command) {
  std::string out;
  for (const auto& part : command) {
    const bool plain = part.find_first_of(" \t\"'$\\") == std::string::npos && !part.empty();
    out += (out.empty() ? "" : " ") + (plain ? part : "'" + part + "'");
  }
  return out;
}

}  // namespace

CaptureMode parse_capture_mode(const std::string& text) {
  for (const auto& [value, name] : kModeNames)
    if (name == text) return value;
  throw UsageError(fmt::format("--mode {}: expected interpret (default), record or live", text));
}

namespace {

// Refuses, before the (long) command runs, an output it could not write or merge into: the
// manifest to merge is read now and its folder made. Returns whether the output exists.
bool prepare_output(const CaptureOptions& options) {
  if (options.command.empty())
    throw UsageError(
        "capture needs the command to run after `--`, e.g. `triton-portcheck capture -- "
        "pytest tests/`");
  const bool exists = std::filesystem::exists(options.output);
  if (exists && options.merge == MergeMode::create && !options.force)
    throw UsageError(fmt::format(
        "{} exists: pass --update to replace the rows captured before, --append to add to it, "
        "or --force to overwrite it",
        options.output.string()));
  if (exists && options.merge != MergeMode::create) (void)load_manifest(options.output);
  if (const auto folder = std::filesystem::absolute(options.output).parent_path();
      !std::filesystem::is_directory(folder)) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec)
      throw UsageError(fmt::format("-o {}: cannot create folder {}: {}", options.output.string(),
                                   folder.string(), ec.message()));
  }
  return exists;
}

// The devices to run the command as: --as, else the one a capture always had (nullopt: the real
// device, in live mode, where nothing is stood in for).
std::vector<std::optional<Persona>> personas_of(const CaptureOptions& options,
                                                const ShareDirs& share) {
  if (options.fake_gpu && options.mode != CaptureMode::record)
    throw UsageError(
        "--fake-gpu needs --mode record: with fake tensors nothing can run, in the interpreter or "
        "on a device");
  if (options.mode == CaptureMode::live) {
    if (!options.personas.empty())
      throw UsageError(
          "--as: live mode records what the real device launches; run as another device with "
          "--mode interpret or --mode record");
    // Said before the command runs: without a GPU it would run to the end and launch nothing.
    if (gpu_device_nodes().empty())
      throw EnvironmentError(
          "--mode live compiles and launches the kernels on a GPU, and this machine shows none (no "
          "/dev/nvidia0, /dev/kfd or /dev/dxg): without one, capture with --mode interpret (the "
          "default: Triton's CPU interpreter runs the tests) or --mode record (the JIT records, "
          "nothing runs; --fake-gpu for a script written for a GPU)");
    return {std::nullopt};
  }
  const std::vector<std::string> names =
      options.personas.empty() ? std::vector<std::string>{"cuda:90"} : options.personas;
  std::vector<std::optional<Persona>> out;
  for (auto& persona : load_personas(share.data / "device-personas.toml", names))
    out.emplace_back(std::move(persona));
  return out;
}

// Any Python 3 runs the tools' script (standard library only): the one the user's environment
// names, else whatever `python3` the command finds.
std::string python_for_vendor_tools() {
  try {
    return resolve_python("");
  } catch (const EnvironmentError&) {
    return "python3";
  }
}

// Runs the user's command with our sitecustomize first on PYTHONPATH, once per persona; the hook
// writes one launches-*.jsonl per process into a folder of `launches_dir` per persona. Stops at
// an interrupted run; otherwise the first failing status is the outcome.
CommandOutcome run_with_hook(const CaptureOptions& options, const std::filesystem::path& scratch,
                             const std::filesystem::path& launches_dir) {
  const auto share = ShareDirs::locate();
  const auto personas = personas_of(options, share);
  const auto hook_dir = scratch / "hook";
  std::filesystem::create_directories(hook_dir);
  util::atomic_write_file(hook_dir / "sitecustomize.py", kSiteCustomize);
  if (personas.front().has_value())
    write_vendor_tools(hook_dir / "bin", share.worker, python_for_vendor_tools());
  CommandOutcome outcome;
  for (std::size_t i = 0; i < personas.size() && !outcome.interrupted; ++i) {
    const auto& persona = personas[i];
    const auto folder = launches_dir / std::to_string(i);
    std::filesystem::create_directories(folder);
    if (!options.quiet)
      std::cerr << fmt::format(
          "triton-portcheck: capturing ({} mode{}): {}\n", mode_name(options.mode),
          persona ? ", as " + persona->target.name() : "", quoted_command(options.command));
    const auto run =
        run_command(options.command, capture_environment(hook_dir, folder, share.worker, options,
                                                         persona ? persona->device.dump() : "",
                                                         scratch_marker(scratch)));
    if (run.interrupted || outcome.exit_code == 0) outcome = run;
  }
  return outcome;
}

void warn(const std::vector<std::string>& warnings) {
  for (const auto& warning : warnings)
    std::cerr << "triton-portcheck: warning: " << warning << "\n";
}

// Nothing to write: says why, and passes a failing command's status on (else 1).
int nothing_launched(const CaptureOptions& options, const CommandOutcome& outcome) {
  std::cerr << fmt::format(
      "triton-portcheck: the command launched no Triton kernel that can be checked (exit "
      "status {}), so {} was not written. In interpret and record modes kernels must be "
      "launched with CPU tensors; tests that skip themselves without CUDA launch nothing "
      "(see docs/capture.md).{}\n",
      outcome.exit_code, options.output.string(),
      outcome.exit_code != 0
          ? fmt::format(" The command's own exit status {} is passed on.", outcome.exit_code)
          : "");
  return outcome.exit_code != 0 ? outcome.exit_code : exit_code::new_failures;
}

// The manifest's new text: the captured rows alone, or merged into the existing file.
MergeResult manifest_text(const CaptureOptions& options, bool exists,
                          const CaptureSummary& summary) {
  const std::vector<std::string> header = {
      fmt::format("Captured by `triton-portcheck capture --mode {}` from: {}",
                  mode_name(options.mode), quoted_command(options.command)),
      "Each row is a specialisation the JIT compiled: ':16' is tt.divisibility 16, and an int",
      "equal to 1 is a constant. `capture --update` replaces the rows that carry `captured` and",
      "keeps hand-written rows, comments and xfail lists."};
  if (exists && options.merge != MergeMode::create)
    return merge_captured_manifest(options.output, util::read_file(options.output), summary.kernels,
                                   options.merge, header);
  return render_captured_manifest(summary.kernels, header);
}

void print_written(const CaptureOptions& options, const CaptureSummary& summary,
                   const MergeResult& result) {
  int rows = 0;
  for (const auto& k : summary.kernels) rows += static_cast<int>(k.rows.size());
  std::cerr << fmt::format(
      "triton-portcheck: {} distinct launch(es){} of {} kernel(s) -> {} row(s); {} written to "
      "{}{}{}\n",
      summary.launches,
      options.personas.size() > 1 ? fmt::format(" in {} runs (as {})", options.personas.size(),
                                                util::join(options.personas, ", "))
                                  : "",
      summary.kernels.size(), rows, result.rows_written, options.output.string(),
      result.rows_replaced
          ? fmt::format(" ({} earlier captured row(s) replaced)", result.rows_replaced)
          : "",
      result.rows_existing
          ? fmt::format(" ({} already in the manifest, not repeated)", result.rows_existing)
          : "");
}

// Rows were written; a command that failed still decides the exit code, except in record mode,
// where kernels never run and tests that check results are expected to fail.
int status_after_writing(const CaptureOptions& options, const CommandOutcome& outcome) {
  if (outcome.exit_code == 0) return exit_code::ok;
  if (options.mode == CaptureMode::record) {
    std::cerr << fmt::format(
        "triton-portcheck: the command exited with status {}: expected in record mode, where "
        "kernels are recorded but never run, so tests that check results fail\n",
        outcome.exit_code);
    return exit_code::ok;
  }
  std::cerr << fmt::format(
      "triton-portcheck: the command exited with status {}: the rows of the launches it made "
      "were written, but tests that failed early may have launched less\n",
      outcome.exit_code);
  return outcome.exit_code;
}

// The modules of kernels generated at run time, written beside the manifest before it (a run
// killed in between leaves a file too many, never a row without its file).
void write_generated_modules(const CaptureSummary& summary, const std::filesystem::path& dir) {
  for (const auto& kernel : summary.kernels) {
    if (kernel.generated_file.empty()) continue;
    const auto path = dir / kGeneratedFolder / kernel.generated_file;
    std::filesystem::create_directories(path.parent_path());
    if (util::read_file_bounded(path, kernel.generated_source.size() + 1) !=
        kernel.generated_source)
      util::atomic_write_file(path, kernel.generated_source);
  }
}

// Keeps the generated folder to what the manifest as written names: a module that no row (not
// even a hand-written one) points at any more is removed, and the folder once it is empty.
void tidy_generated_modules(const std::filesystem::path& dir, const std::string& manifest) {
  const auto folder = dir / kGeneratedFolder;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("gen_") && entry.path().extension() == ".py" &&
        manifest.find(fmt::format("{}/{}", kGeneratedFolder, name)) == std::string::npos)
      std::filesystem::remove(entry.path(), ec);
  }
  if (std::filesystem::is_empty(folder, ec)) std::filesystem::remove(folder, ec);
}

}  // namespace

int run_capture(const CaptureOptions& options) {
  const bool exists = prepare_output(options);
  const ScratchDir scratch("portcheck-capture");
  const auto launches_dir = scratch.path() / "launches";
  const auto outcome = run_with_hook(options, scratch.path(), launches_dir);
  if (outcome.interrupted) {
    std::cerr << "triton-portcheck: interrupted: nothing written\n";
    return exit_code::interrupted;
  }

  const auto records = read_capture_records(launches_dir);
  const auto summary = build_captured_kernels(
      records.launches, std::filesystem::absolute(options.output).parent_path(), records.autotuned);
  warn(records.warnings);
  warn(summary.warnings);
  if (records.bad_lines > 0)
    std::cerr << fmt::format(
        "triton-portcheck: warning: {} unreadable record(s) skipped (the first: {})\n",
        records.bad_lines, util::printable(records.first_bad_line));
  if (summary.kernels.empty()) return nothing_launched(options, outcome);

  const auto result = manifest_text(options, exists, summary);
  const auto manifest_dir = std::filesystem::absolute(options.output).parent_path();
  write_generated_modules(summary, manifest_dir);
  util::atomic_write_file(options.output, result.text);
  tidy_generated_modules(manifest_dir, result.text);
  warn(result.warnings);
  print_written(options, summary, result);
  return status_after_writing(options, outcome);
}

}  // namespace portcheck
