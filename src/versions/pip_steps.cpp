#include "src/versions/pip_steps.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "src/run/supervisor.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_cursor.hpp"

extern char** environ;

namespace portcheck {

namespace fs = std::filesystem;

// The parent's environment less what could point the child Python somewhere else.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("PYTHONPATH=") || entry.starts_with("PYTHONHOME=") ||
        entry.starts_with("VIRTUAL_ENV=") || entry.starts_with("PIP_NO_INPUT=") ||
        entry.starts_with("PYTHONNOUSERSITE="))
      continue;
    env.emplace_back(entry);
  }
  env.emplace_back("PIP_NO_INPUT=1");
  env.emplace_back("PYTHONNOUSERSITE=1");
  return env;
}

// What every step of one `env add` carries in its environment, so that the death watch finds
// venv and pip (and what they start) if the tool is killed.
std::string step_marker() { return fmt::format("TRITON_PORTCHECK_ENV_ADD={}", ::getpid()); }

StepResult run_step(const std::vector<std::string>& argv, const fs::path& logs,
                    const std::string& name, std::chrono::seconds timeout) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.env = child_environment();
  spec.env.push_back(step_marker());
  // venv's ensurepip and pip write temporary folders (wheels, unpacked packages) that a kill
  // leaves behind: in `logs`, which the step's death watch removes however the tool ends.
  std::error_code ec;
  fs::create_directories(logs / "tmp", ec);
  if (!ec) {
    std::erase_if(spec.env, [](const std::string& e) { return e.starts_with("TMPDIR="); });
    spec.env.push_back("TMPDIR=" + (logs / "tmp").string());
  }
  spec.cwd = logs;
  spec.stdout_path = logs / (name + ".stdout");
  spec.stderr_path = logs / (name + ".stderr");
  spec.timeout = timeout;
  Supervisor supervisor;
  supervisor.start(0, spec);
  std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> ended;
  while (ended.empty()) ended = supervisor.wait(std::chrono::milliseconds(200));
  StepResult result;
  result.outcome = ended.front().second;
  result.stdout_text = util::read_file_bounded(spec.stdout_path, 64000).value_or("");
  result.stderr_text = util::read_file_bounded(spec.stderr_path, 64000).value_or("");
  return result;
}

namespace {

// The phrases that name the cause in pip's retry warnings, each with what follows it.
enum class Tail {
  none,
  to_quote,        // the rest of the repr's string
  host_timed_out,  // "Connection to HOST timed out"
};
struct Phrase {
  std::string_view text;
  Tail tail;
};
constexpr Phrase kNetworkPhrases[] = {
    {"Failed to establish a new connection: ", Tail::to_quote},
    {"Temporary failure in name resolution", Tail::none},
    {"Name or service not known", Tail::none},
    {"Network is unreachable", Tail::none},
    {"Connection refused", Tail::none},
    {"Read timed out", Tail::none},
    {"read timed out", Tail::none},
    {"Connection to ", Tail::host_timed_out},
    {"ProxyError", Tail::to_quote},
    {"SSLError", Tail::to_quote},
};

}  // namespace

// The readable part of a pip retry warning, which holds the cause in the middle of a repr: the
// first place a phrase starts, the earlier phrase of the table where two start at one place.
// Scanned by hand: std::regex recursed once per character and crashed on a long line.
std::optional<std::string> network_cause(std::string_view line) {
  const auto not_quote = [](char ch) { return ch != '\'' && ch != '"'; };
  const auto not_space = [](char ch) { return ch != ' '; };
  for (std::size_t at = 0; at < line.size(); ++at) {
    for (const auto& phrase : kNetworkPhrases) {
      util::TextCursor c(line, at);
      if (!c.take(phrase.text)) continue;
      if (phrase.tail == Tail::to_quote) c.take_run(not_quote);
      if (phrase.tail == Tail::host_timed_out && !(c.take_run(not_space) && c.take(" timed out")))
        continue;
      return std::string(line.substr(at, c.at() - at));
    }
  }
  return std::nullopt;
}

// Why a step failed, in one line: pip's ERROR line (or the last line of stderr), a timeout, ...
std::string failure_reason(const StepResult& step, std::chrono::seconds timeout) {
  switch (step.outcome.how) {
    case Termination::spawn_failed:
      return step.outcome.spawn_error;
    case Termination::timed_out:
      return fmt::format("no answer within {} s (is the package index reachable?)",
                         timeout.count());
    case Termination::signaled:
      return fmt::format("killed by signal {}", step.outcome.signal);
    default:
      break;
  }
  std::string error_line;
  std::string network_line;
  std::string warning_line;
  std::string last;
  for (const auto& raw : util::split_lines(step.stderr_text)) {
    const auto line = std::string(util::trim(raw));
    if (line.empty()) continue;
    last = line;
    if (error_line.empty() && line.starts_with("ERROR:")) error_line = line;
    if (warning_line.empty() && line.starts_with("WARNING:")) warning_line = line;
    if (network_line.empty() &&
        (line.find("NewConnectionError") != std::string::npos ||
         line.find("Temporary failure in name resolution") != std::string::npos ||
         line.find("Network is unreachable") != std::string::npos ||
         line.find("ConnectTimeoutError") != std::string::npos ||
         line.find("ReadTimeoutError") != std::string::npos ||
         line.find("ProxyError") != std::string::npos ||
         line.find("SSLError") != std::string::npos))
      network_line = line;
  }
  std::string reason = error_line.empty() ? last : error_line;
  if (!network_line.empty()) {
    const std::string detail = network_cause(network_line).value_or(network_line);
    reason = fmt::format("cannot reach the package index ({}){}", detail,
                         reason.empty() ? "" : "; pip: " + reason);
  } else if (!warning_line.empty() && reason.find("(from versions: none)") != std::string::npos) {
    reason += " [" + warning_line + "]";  // e.g. an index that pip ignores
  }
  if (reason.empty()) reason = fmt::format("exit status {}", step.outcome.exit_code);
  return reason;
}

// "(from versions: 2.0.0, 2.1.0, 3.8.0)" in pip's "Could not find a version" error.
std::optional<std::vector<std::string>> offered_versions(const std::string& stderr_text) {
  constexpr std::string_view kOpen = "(from versions: ";
  const auto open = stderr_text.find(kOpen);
  const auto close = open == std::string::npos ? open : stderr_text.find(')', open + kOpen.size());
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string> versions;
  const std::string list = stderr_text.substr(open + kOpen.size(), close - open - kOpen.size());
  if (util::trim(list) == "none") return versions;
  for (const auto& v : util::split(list, ',')) {
    const auto t = std::string(util::trim(v));
    if (!t.empty()) versions.push_back(t);
  }
  return versions;
}

bool pip_aims_elsewhere(std::string_view pip_version_line) {
  // "pip MAJOR.MINOR[.PATCH] from ..."
  constexpr std::string_view kPip = "pip ";
  if (!pip_version_line.starts_with(kPip)) return false;
  const auto version = pip_version_line.substr(kPip.size());
  const auto parts = util::split(version.substr(0, version.find(' ')), '.');
  if (parts.size() < 2) return false;
  int major = 0;
  int minor = 0;
  for (auto [text, number] : {std::pair{&parts[0], &major}, std::pair{&parts[1], &minor}}) {
    const auto* end = text->data() + text->size();
    if (text->empty() || std::from_chars(text->data(), end, *number).ptr != end) return false;
  }
  return std::make_pair(major, minor) >= std::make_pair(22, 3);
}

std::vector<std::string> PipRunner::command(const std::string& verb) const {
  if (outer_python.empty()) return {env_python, "-m", "pip", verb};
  return {outer_python, "-m", "pip", "--python", env_python, verb};
}

PipRunner pip_runner_for(const std::string& python, const std::string& env_python,
                         const std::filesystem::path& logs) {
  const auto step =
      run_step({python, "-m", "pip", "--version"}, logs, "pip-version", std::chrono::seconds(120));
  const bool outer = step.ok() && pip_aims_elsewhere(util::trim(step.stdout_text));
  return {outer ? python : std::string(), env_python};
}

}  // namespace portcheck
