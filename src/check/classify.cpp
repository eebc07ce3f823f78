#include "src/check/classify.hpp"

#include <array>
#include <csignal>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "src/core/ir_text.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null;
  return j.is_object() && j.contains(key) ? j.at(key) : null;
}

std::string string_field(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// The signals a compiler dies of, by name; any other by number.
constexpr std::array<std::pair<int, std::string_view>, 7> kSignalNames{{
    {SIGSEGV, "SIGSEGV"},
    {SIGABRT, "SIGABRT"},
    {SIGBUS, "SIGBUS"},
    {SIGILL, "SIGILL"},
    {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"},
    {SIGTERM, "SIGTERM"},
}};

std::string signal_name(int sig) {
  for (const auto& [number, name] : kSignalNames)
    if (number == sig) return std::string(name);
  return fmt::format("signal {}", sig);
}

// `AttributeError("module ... 'tgamma'")` -> `AttributeError: module ... 'tgamma'`
std::string unwrap_exception_repr(const std::string& line) {
  static const std::regex repr(R"re(^([A-Za-z_][A-Za-z0-9_.]*)\((["'])(.*)\2\)$)re");
  std::smatch m;
  if (!std::regex_match(line, m, repr)) return line;
  std::string body = m[3];
  std::string out;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size() &&
        (body[i + 1] == '"' || body[i + 1] == '\'' || body[i + 1] == '\\'))
      ++i;
    out += body[i];
  }
  return m[1].str() + ": " + out;
}

std::string last_nonempty_line(const std::string& text) {
  const auto lines = util::split_lines(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!util::trim(*it).empty()) return std::string(util::trim(*it));
  return {};
}

// "path/kernels.py:93:9: error: 'arith.extf' op ..." -> message, location
struct Diagnostic {
  std::string message;
  std::optional<SourceLocation> where;
};

std::optional<Diagnostic> first_mlir_error(const std::string& stderr_text) {
  static const std::regex located(R"(^(.*?):(\d+):(\d+): error: (.*)$)");
  static const std::regex bare(R"(^(?:loc\(.*\): )?error: (.*)$)");
  for (const auto& line : util::split_lines(stderr_text)) {
    if (line.find("Failures have been detected while processing an MLIR pass pipeline") !=
        std::string::npos)
      continue;
    std::smatch m;
    if (std::regex_match(line, m, located)) {
      Diagnostic d{m[4], SourceLocation{m[1], std::stoi(m[2])}};
      if (d.where->file.empty() || d.where->file == "-" || d.where->file.starts_with("<"))
        d.where.reset();
      return d;
    }
    if (std::regex_match(line, m, bare)) return Diagnostic{m[1], std::nullopt};
  }
  return std::nullopt;
}

std::string failing_pass(const std::string& stderr_text) {
  static const std::regex pipeline(R"(Pipeline failed while executing \[`([^`]+)`)");
  std::smatch m;
  if (std::regex_search(stderr_text, m, pipeline)) return m[1];
  return {};
}

std::string first_line_matching(const std::string& text, const std::regex& re) {
  for (const auto& line : util::split_lines(text))
    if (std::regex_search(line, re)) return std::string(util::trim(line));
  return {};
}

// "ptxas-blackwell /tmp/tmpab.ptx, line 289; error   : Feature ..." -> "ptxas: Feature ..."
std::string ptxas_message(const std::string& text) {
  static const std::regex error_line(R"((\S*ptxas\S*)\s+\S+,\s*line\s+\d+;\s*error\s*:\s*(.*))");
  static const std::regex fatal_line(R"((\S*ptxas\S*)\s+fatal\s*:\s*(.*))");
  for (const auto& line : util::split_lines(text)) {
    std::smatch m;
    if (std::regex_search(line, m, error_line) || std::regex_search(line, m, fatal_line)) {
      const auto tool = std::filesystem::path(m[1].str()).filename().string();
      return fmt::format("{}: {}", tool, util::trim(m[2].str()));
    }
  }
  return {};
}

std::string llvm_message(const std::string& stderr_text) {
  static const std::regex llvm_error(R"(LLVM ERROR: .*)");
  return first_line_matching(stderr_text, llvm_error);
}

Classification from_worker_error(const nlohmann::json& result, const std::string& stderr_text) {
  Classification c;
  c.stage = string_field(result, "stage");
  const auto& error = field(result, "error");
  const auto type = string_field(error, "type");
  const auto text = string_field(error, "message");
  if (const auto& src = field(result, "error_source"); src.is_object())
    c.error_source = SourceLocation{string_field(src, "file"), field(src, "line").get<int>()};

  if (c.stage == "import") {
    c.kind = FailureKind::import_error;
    c.message = text;
  } else if (type.find("StandInDriverError") != std::string::npos) {
    c.kind = FailureKind::internal_error;
    c.message = last_nonempty_line(text);
  } else if (c.stage == "frontend") {
    c.kind = FailureKind::frontend_error;
    c.message = unwrap_exception_repr(last_nonempty_line(text));
  } else if (c.stage == "cubin" || c.stage == "hsaco") {
    c.kind = FailureKind::assembler_error;
    c.message = ptxas_message(text);
    if (c.message.empty()) c.message = ptxas_message(stderr_text);
    if (c.message.empty()) c.message = last_nonempty_line(llvm_message(stderr_text) + "\n" + text);
  } else if (text.find("PassManager::run failed") != std::string::npos) {
    c.kind = FailureKind::mlir_error;
    c.pass = failing_pass(stderr_text);
    if (auto d = first_mlir_error(stderr_text)) {
      c.message = d->message;
      if (!c.error_source) c.error_source = d->where;
    } else {
      c.message = last_nonempty_line(text);
    }
  } else if (c.stage == "ttir" || c.stage == "ttgir") {
    // A Python-side failure inside an MLIR stage (an assertion in a pass's Python driver).
    c.kind = FailureKind::mlir_error;
    c.message = unwrap_exception_repr(last_nonempty_line(text));
  } else {
    c.kind = FailureKind::llvm_error;  // llir, ptx, amdgcn: LLVM lowering and code generation
    c.message = llvm_message(stderr_text);
    if (c.message.empty()) c.message = unwrap_exception_repr(last_nonempty_line(text));
  }
  if (c.message.empty()) c.message = type.empty() ? "the compiler failed without a message" : type;
  return c;
}

std::string crash_detail(const std::string& stderr_text) {
  static const std::regex interesting(
      R"(LLVM ERROR: |Assertion .* failed|terminate called|Fatal Python error)");
  return first_line_matching(stderr_text, interesting);
}

// A failure known from how the process ended, before any compiler message: no pass, no place.
Classification ending(FailureKind kind, std::string stage, std::string message) {
  return {kind, std::move(stage), "", std::move(message), "", std::nullopt};
}

// Ended by us (time or memory limit, an interrupt) or lost with its fork server: the message
// says which, "{}" taking the stage it was in.
struct EndedByUs {
  Termination how;
  FailureKind kind;
  std::string_view message;
};
constexpr std::array<EndedByUs, 5> kEndedByUs{{
    {Termination::timed_out, FailureKind::timeout,
     "still running in stage {} when the time limit ran out"},
    {Termination::out_of_memory, FailureKind::oom,
     "the cell's processes together exceeded the memory limit in stage {}"},
    {Termination::worker_lost, FailureKind::internal_error,
     "the fork server died twice while holding this cell (see the worker log)"},
    {Termination::killed_its_worker, FailureKind::crash,
     "the kernel's code killed its parent process (the fork server) in stage {}, again when "
     "retried alone; other cells are unaffected"},
    {Termination::cancelled, FailureKind::internal_error, "cancelled: the run was interrupted"},
}};

Classification from_our_kill(Termination how, const std::string& stage) {
  for (const auto& row : kEndedByUs)
    if (row.how == how)
      return ending(row.kind, stage, fmt::format(fmt::runtime(row.message), stage));
  return ending(FailureKind::internal_error, stage, "the cell ended in an unknown way");
}

Classification from_signal(const CellEvidence& evidence, const std::string& stage) {
  const auto signal = signal_name(evidence.outcome.signal);
  if (stage == "import")
    return ending(FailureKind::import_error, stage,
                  fmt::format("importing the kernel's module killed its process with {}", signal));
  const auto detail = crash_detail(evidence.stderr_text);
  return ending(FailureKind::crash, stage,
                fmt::format("the compiler died of {} in stage {}{}", signal, stage,
                            detail.empty() ? "" : ": " + detail));
}

Classification from_exit(const CellEvidence& evidence, const std::string& stage) {
  const auto code = evidence.outcome.exit_code;
  if (evidence.result && code == 0)
    return from_worker_error(*evidence.result, evidence.stderr_text);
  if (stage == "import")  // os._exit() or sys.exit() past our handler while importing the module
    return ending(
        FailureKind::import_error, stage,
        fmt::format("the process exited with status {} while importing the kernel's module", code));
  const auto last = last_nonempty_line(evidence.stderr_text);
  // Only our own code runs before the import ("start") and after the compile ("inspect"), and
  // the worker turns every exception of a compile stage into a result, so one escaping with its
  // traceback is our bug. Otherwise, in a compile stage, the code running there ended the
  // process: the kernel's (os._exit in a helper or hook) or the compiler's (LLVM's
  // report_fatal_error exits with status 1), so the cell is red, not the tool broken.
  const bool python_traceback =
      evidence.stderr_text.find("Traceback (most recent call last):") != std::string::npos;
  if (stage != "start" && stage != "inspect" && !python_traceback) {
    const auto detail = crash_detail(evidence.stderr_text);
    return ending(FailureKind::crash, stage,
                  fmt::format("the process exited with status {} in stage {} without a result "
                              "(os._exit() or exit() in the kernel's code or the compiler){}",
                              code, stage, detail.empty() ? "" : ": " + detail));
  }
  return ending(FailureKind::internal_error, stage,
                fmt::format("the worker exited with status {} without a result{}", code,
                            last.empty() ? "" : ": " + last));
}

}  // namespace

std::string last_stage_from_progress(std::string_view progress_text) {
  std::string stage;
  for (const auto& line : util::split_lines(progress_text))
    if (line.starts_with("stage ")) stage = line.substr(6);
  return stage;
}

std::string normalize_message(std::string_view message) {
  struct Rule {
    std::regex pattern;
    const char* replacement;
  };
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> r;
    const auto add = [&r](const char* p, const char* rep) { r.push_back({std::regex(p), rep}); };
    add(R"(0x[0-9a-fA-F]+)", "0x?");
    add(R"(%[A-Za-z_]*\d+(#\d+)?)", "%N");
    add(R"(#loc\d*)", "#loc");
    add(R"(loc\([^)]*\))", "loc(?)");
    add(R"(:\d+:\d+)", ":L:C");
    add(R"(\bline \d+)", "line N");
    add(R"(\bat \d+:\d+:)", "at L:C:");
    add(R"(\bsm_\d+[af]?\b)", "sm_N");
    add(R"(\bgfx[0-9a-f]{3,4}\b)", "gfxN");
    add(R"(\bcuda:\d+\b)", "cuda:N");
    add(R"(\s+)", " ");
    return r;
  }();
  std::string out(message);
  // MLIR layout attributes (#ttg.blocked<{sizePerThread = ...}>) depend on num_warps and the
  // warp size, so the same failure would read differently on every target; keep only their names.
  static const std::regex layout_body(R"(<\{[^{}]*\}>)");
  for (std::string previous; previous != out;) {
    previous = out;
    out = std::regex_replace(out, layout_body, "<(layout)>");
  }
  // Paths by the rule shared with `diff --ir` (core/ir_text.hpp), in its message syntax: the one
  // these fingerprints have always been made with.
  out = normalize_paths(out, PathSyntax::message);
  for (const auto& rule : rules) out = std::regex_replace(out, rule.pattern, rule.replacement);
  return std::string(util::trim(out));
}

std::string fingerprint(FailureKind kind, std::string_view stage, std::string_view pass,
                        std::string_view message) {
  const auto key =
      fmt::format("{}|{}|{}|{}", to_string(kind), stage, pass, normalize_message(message));
  return util::sha1_hex(key).substr(0, 12);
}

Classification classify(const CellEvidence& evidence) {
  const auto& outcome = evidence.outcome;
  const std::string stage = evidence.last_stage.empty() ? "start" : evidence.last_stage;
  if (outcome.how == Termination::exited && evidence.result && outcome.exit_code == 0 &&
      string_field(*evidence.result, "status") == "ok")
    return {};
  Classification c;
  if (outcome.how == Termination::spawn_failed)
    c = ending(FailureKind::internal_error, "start", outcome.spawn_error);
  else if (outcome.how == Termination::signaled)
    c = from_signal(evidence, stage);
  else if (outcome.how == Termination::exited)
    c = from_exit(evidence, stage);
  else
    c = from_our_kill(outcome.how, stage);
  c.fingerprint = fingerprint(c.kind, c.stage, c.pass, c.message);
  return c;
}

}  // namespace portcheck
