#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/core/cell.hpp"
#include "src/core/cell_answer.hpp"
#include "src/run/process_runner.hpp"

namespace portcheck {

// How much of a cell's stderr is read, and of its log (traceback and stderr) kept: the end.
inline constexpr std::size_t kCellLogLimit = 16000;

// What a finished cell left behind: how its process ended, the worker's result file (absent if
// it died first), the last stage it marked, and what was printed on file descriptor 2.
struct CellEvidence {
  ProcessOutcome outcome;
  std::optional<CellAnswer> result;  // read where it entered (src/run/cell_answer_read.hpp)
  std::string last_stage;
  std::string stderr_text;
  // Why the result the worker wrote is not the answer protocol.schema.json defines (the result is
  // then dropped), as the cell's message: its internal error. Empty when it is.
  std::string protocol_problem;
};

struct Classification {
  FailureKind kind = FailureKind::none;
  std::string stage;
  std::string pass;
  std::string message;
  std::string fingerprint;
  std::optional<SourceLocation> error_source;
};

Classification classify(const CellEvidence& evidence);

// Replaces what differs between runs, paths and machines (SSA numbers, locations, temporary
// paths, addresses) so the same failure always reads the same.
std::string normalize_message(std::string_view message);

// A stable 12-hex-digit identity for a failure: kind, stage, pass and normalised message.
std::string fingerprint(FailureKind kind, std::string_view stage, std::string_view pass,
                        std::string_view message);

// The last stage named in a worker progress file ("stage ttgir" lines).
std::string last_stage_from_progress(std::string_view progress_text);

}  // namespace portcheck
