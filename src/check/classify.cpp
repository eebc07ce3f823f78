#include "src/check/classify.hpp"

#include <array>
#include <csignal>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "src/check/compiler_messages.hpp"
#include "src/core/ir_text.hpp"
#include "src/run/worker_channels.hpp"
#include "util/ascii.hpp"
#include "util/strings.hpp"
#include "util/text_cursor.hpp"

namespace portcheck {
namespace {

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

using util::ascii::is_digit;
constexpr auto is_name_char = util::ascii::is_word;
using util::expect_at;
using util::skip_while;

Classification from_worker_error(const CellAnswer& result, const std::string& stderr_text) {
  Classification c;
  c.stage = result.stage;
  const auto type = result.error ? result.error->type : "";
  const auto text = result.error ? result.error->message : "";
  c.error_source = result.error_source;

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
    // The assembler's own error line, not the wrapper Triton raises after it ("LLD failed to
    // link hsaco source ... because", "AMD assembler rejected generated AMDGCN").
    if (c.message.empty()) c.message = first_backend_error(stderr_text).value_or("");
    if (c.message.empty()) c.message = last_nonempty_line(text);
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
    c.message = first_backend_error(stderr_text).value_or("");
    if (c.message.empty()) c.message = unwrap_exception_repr(last_nonempty_line(text));
  }
  if (c.message.empty()) c.message = type.empty() ? "the compiler failed without a message" : type;
  return c;
}

std::string crash_detail(const std::string& stderr_text) {
  for (const auto& line : util::split_lines(stderr_text)) {
    const auto assertion = line.find("Assertion ");
    if (line.find("LLVM ERROR: ") != std::string::npos ||
        (assertion != std::string::npos &&
         line.find(" failed", assertion + 10) != std::string::npos) ||
        line.find("terminate called") != std::string::npos ||
        line.find("Fatal Python error") != std::string::npos)
      return std::string(util::trim(line));
  }
  return {};
}

// A failure known from how the process ended, before any compiler message: no pass, no place.
Classification ending(FailureKind kind, std::string stage, std::string message) {
  return {kind, std::move(stage), "", std::move(message), "", std::nullopt};
}

// Ended by us (time or memory limit, an interrupt) or lost with its worker: the message
// says which, "{}" taking the stage it was in.
struct EndedByUs {
  Termination how;
  FailureKind kind;
  std::string_view message;
};
constexpr std::array<EndedByUs, 6> kEndedByUs{{
    {Termination::timed_out, FailureKind::timeout,
     "still running in stage {} when the time limit ran out"},
    {Termination::out_of_memory, FailureKind::oom,
     "the cell's processes together exceeded the memory limit in stage {}"},
    {Termination::worker_lost, FailureKind::internal_error,
     "the fork server died twice while holding this cell (see the worker log)"},
    {Termination::killed_its_worker, FailureKind::crash,
     "the kernel's code killed its parent process (the fork server) in stage {}, again when "
     "retried alone; other cells are unaffected"},
    {Termination::killed_its_parent, FailureKind::crash,
     "the kernel's code killed its parent process (the cell's worker process) in stage {}; other "
     "cells are unaffected"},
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

// The rewrites that make a message's fingerprint stable across runs, targets and machines. They
// were std::regex (each one's pattern is its comment) and must match exactly what it matched: a
// different match is a different fingerprint, and users' baselines hold fingerprints. Each
// matcher gives the length of its match at s[i], 0 for none (no pattern matches nothing).
using Matcher = std::size_t (*)(std::string_view s, std::size_t i);
struct Rewrite {
  Matcher match;
  std::string_view replacement;
};

// Every leftmost match, left to right, replaced: what std::regex_replace did.
std::string replace_all(std::string_view s, const Rewrite& rewrite) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (const auto n = rewrite.match(s, i); n > 0) {
      out += rewrite.replacement;
      i += n;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// `\b` before a word character at s[i], and after one at s[i - 1].
bool starts_word(std::string_view s, std::size_t i) { return i == 0 || !is_name_char(s[i - 1]); }
bool ends_word(std::string_view s, std::size_t i) { return i == s.size() || !is_name_char(s[i]); }
// The digits at s[i]: their end, or nullopt when there are none.
std::optional<std::size_t> digits(std::string_view s, std::size_t i) {
  const auto end = skip_while(s, i, is_digit);
  return end > i ? std::optional(end) : std::nullopt;
}
constexpr bool is_lower_hex(char ch) { return is_digit(ch) || (ch >= 'a' && ch <= 'f'); }
constexpr bool is_letter_or_underscore(char ch) { return util::ascii::is_alpha(ch) || ch == '_'; }

// <\{[^{}]*\}>
std::size_t layout_body(std::string_view s, std::size_t i) {
  if (!expect_at(s, i, "<{")) return 0;
  const auto close = s.find_first_of("{}", i + 2);
  if (close == std::string_view::npos || s[close] != '}' || !expect_at(s, close + 1, ">")) return 0;
  return close + 2 - i;
}

// `word` then digits, as the end of a match starting at i (0 when either is missing).
std::size_t word_and_digits(std::string_view s, std::size_t i, std::string_view word) {
  const auto after = expect_at(s, i, word);
  const auto end = after ? digits(s, *after) : std::nullopt;
  return end ? *end - i : 0;
}

constexpr Rewrite kRewrites[] = {
    {// 0x[0-9a-fA-F]+
     [](std::string_view s, std::size_t i) -> std::size_t {
       const auto end = expect_at(s, i, "0x") ? skip_while(s, i + 2, util::ascii::is_hex) : i;
       return end > i + 2 ? end - i : 0;
     },
     "0x?"},
    {// %[A-Za-z_]*\d+(#\d+)?
     [](std::string_view s, std::size_t i) -> std::size_t {
       if (s[i] != '%') return 0;
       const auto end = digits(s, skip_while(s, i + 1, is_letter_or_underscore));
       if (!end) return 0;
       const auto suffix = expect_at(s, *end, "#") ? digits(s, *end + 1) : std::nullopt;
       return suffix.value_or(*end) - i;
     },
     "%N"},
    {// #loc\d*
     [](std::string_view s, std::size_t i) -> std::size_t {
       return expect_at(s, i, "#loc") ? skip_while(s, i + 4, is_digit) - i : 0;
     },
     "#loc"},
    {// loc\([^)]*\)
     [](std::string_view s, std::size_t i) -> std::size_t {
       const auto close = expect_at(s, i, "loc(") ? s.find(')', i + 4) : std::string_view::npos;
       return close == std::string_view::npos ? 0 : close + 1 - i;
     },
     "loc(?)"},
    {// :\d+:\d+
     [](std::string_view s, std::size_t i) -> std::size_t {
       const auto line = word_and_digits(s, i, ":");
       const auto column = line > 0 ? word_and_digits(s, i + line, ":") : 0;
       return column > 0 ? line + column : 0;
     },
     ":L:C"},
    {// \bline \d+
     [](std::string_view s, std::size_t i) -> std::size_t {
       return starts_word(s, i) ? word_and_digits(s, i, "line ") : 0;
     },
     "line N"},
    {// \bat \d+:\d+:
     [](std::string_view s, std::size_t i) -> std::size_t {
       const auto line = starts_word(s, i) ? word_and_digits(s, i, "at ") : 0;
       const auto column = line > 0 ? word_and_digits(s, i + line, ":") : 0;
       return column > 0 && expect_at(s, i + line + column, ":") ? line + column + 1 : 0;
     },
     "at L:C:"},
    {// \bsm_\d+[af]?\b
     [](std::string_view s, std::size_t i) -> std::size_t {
       const auto n = starts_word(s, i) ? word_and_digits(s, i, "sm_") : 0;
       if (n == 0) return 0;
       if ((expect_at(s, i + n, "a") || expect_at(s, i + n, "f")) && ends_word(s, i + n + 1))
         return n + 1;
       return ends_word(s, i + n) ? n : 0;
     },
     "sm_N"},
    {// \bgfx[0-9a-f]{3,4}\b: a run of 5 leaves no \b after its 3rd or 4th character
     [](std::string_view s, std::size_t i) -> std::size_t {
       if (!starts_word(s, i) || !expect_at(s, i, "gfx")) return 0;
       const auto n = skip_while(s, i + 3, is_lower_hex) - (i + 3);
       return (n == 3 || n == 4) && ends_word(s, i + 3 + n) ? 3 + n : 0;
     },
     "gfxN"},
    {// \bcuda:\d+\b
     [](std::string_view s, std::size_t i) -> std::size_t {
       const auto n = starts_word(s, i) ? word_and_digits(s, i, "cuda:") : 0;
       return n > 0 && ends_word(s, i + n) ? n : 0;
     },
     "cuda:N"},
    {// \s+
     [](std::string_view s, std::size_t i) -> std::size_t {
       return skip_while(s, i, util::ascii::is_space) - i;
     },
     " "},
};

}  // namespace

std::string last_stage_from_progress(std::string_view progress_text) {
  std::string stage;
  for (const auto& line : util::split_lines(progress_text))
    if (line.starts_with(channels::kStagePrefix))
      stage = line.substr(channels::kStagePrefix.size());
  return stage;
}

std::string normalize_message(std::string_view message) {
  // The rewrites look at the first 4 KiB only: far more than any compiler's decisive line, and
  // what fingerprints have always been made of (when the rules were regexes, to bound recursion).
  constexpr std::size_t kNormalizedLength = 4096;
  std::string out(message.substr(0, kNormalizedLength));
  // MLIR layout attributes (#ttg.blocked<{sizePerThread = ...}>) depend on num_warps and the
  // warp size, so the same failure would read differently on every target; keep only their names.
  for (std::string previous; previous != out;) {
    previous = out;
    out = replace_all(out, {layout_body, "<(layout)>"});
  }
  // Paths by the rule shared with `diff --ir` (core/ir_text.hpp), in its message syntax: the one
  // these fingerprints have always been made with.
  out = normalize_paths(out, PathSyntax::message);
  for (const auto& rewrite : kRewrites) out = replace_all(out, rewrite);
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
      evidence.result->ok)
    return {};
  Classification c;
  if (!evidence.protocol_problem.empty())
    c = ending(FailureKind::internal_error, stage, evidence.protocol_problem);
  else if (outcome.how == Termination::spawn_failed)
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
