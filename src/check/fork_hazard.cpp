#include "src/check/fork_hazard.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace portcheck {
namespace {

// The verdicts that do not come from the compiler itself.
constexpr std::array kNotTheCompilers = {
    FailureKind::timeout,      FailureKind::crash,          FailureKind::oom,
    FailureKind::import_error, FailureKind::internal_error,
};

}  // namespace

bool fork_hazard_could_explain(const Classification& verdict, const ProcessOutcome& outcome) {
  if (verdict.kind == FailureKind::timeout) return outcome.stalled;
  if (std::find(kNotTheCompilers.begin(), kNotTheCompilers.end(), verdict.kind) !=
      kNotTheCompilers.end())
    return true;
  // The frontend runs the user's Python (constexpr functions, heuristics), which may call a
  // library that refuses to run in a forked child ("Cannot re-initialize CUDA in forked
  // subprocess").
  if (verdict.kind != FailureKind::frontend_error) return false;
  std::string message = verdict.message;
  std::transform(message.begin(), message.end(), message.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return message.find("fork") != std::string::npos;
}

}  // namespace portcheck
