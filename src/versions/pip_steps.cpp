#include "src/versions/pip_steps.hpp"

#include <regex>

#include <fmt/format.h>

#include "src/run/supervisor.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace portcheck {
namespace {

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

}  // namespace

StepResult run_step(const std::vector<std::string>& argv, const std::filesystem::path& logs,
                    const std::string& name, std::chrono::seconds timeout) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.env = child_environment();
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
    // pip's retry warnings hold the cause in the middle of a repr: keep the readable part.
    static const std::regex cause(
        R"((Failed to establish a new connection: [^'"]*|Temporary failure in name resolution|)"
        R"(Name or service not known|Network is unreachable|Connection refused|[Rr]ead timed out|)"
        R"(Connection to [^ ]+ timed out|ProxyError[^'"]*|SSLError[^'"]*))");
    std::smatch m;
    const std::string detail =
        std::regex_search(network_line, m, cause) ? m[1].str() : network_line;
    reason = fmt::format("cannot reach the package index ({}){}", detail,
                         reason.empty() ? "" : "; pip: " + reason);
  } else if (!warning_line.empty() && reason.find("(from versions: none)") != std::string::npos) {
    reason += " [" + warning_line + "]";  // e.g. an index that pip ignores
  }
  if (reason.empty()) reason = fmt::format("exit status {}", step.outcome.exit_code);
  return reason;
}

std::optional<std::vector<std::string>> offered_versions(const std::string& stderr_text) {
  static const std::regex re(R"(\(from versions: ([^)]*)\))");
  std::smatch m;
  if (!std::regex_search(stderr_text, m, re)) return std::nullopt;
  std::vector<std::string> versions;
  const std::string list = m[1].str();
  if (util::trim(list) == "none") return versions;
  for (const auto& v : util::split(list, ',')) {
    const auto t = std::string(util::trim(v));
    if (!t.empty()) versions.push_back(t);
  }
  return versions;
}

}  // namespace portcheck
