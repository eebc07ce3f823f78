// The stderr classifier: whatever a compile printed and whatever result file it left, classify()
// names a kind, a message and a fingerprint without throwing, crashing or tripping a sanitizer;
// the IR normaliser behind `diff --ir` takes the same text. The first bytes choose how the
// process ended; the rest is "result JSON\x00stderr" (either may be empty).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "src/check/classify.hpp"
#include "src/core/ir_text.hpp"
#include "src/run/cell_answer_read.hpp"
#include "util/bounded_json.hpp"

namespace {

constexpr portcheck::Termination kEndings[] = {
    portcheck::Termination::exited,      portcheck::Termination::signaled,
    portcheck::Termination::timed_out,   portcheck::Termination::out_of_memory,
    portcheck::Termination::worker_lost, portcheck::Termination::cancelled,
    portcheck::Termination::spawn_failed};
constexpr const char* kStages[] = {"",     "import", "frontend", "ttir",   "ttgir",
                                   "llir", "ptx",    "cubin",    "amdgcn", "hsaco"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  portcheck::CellEvidence evidence;
  evidence.outcome.how = kEndings[data[0] % std::size(kEndings)];
  evidence.outcome.exit_code = data[1] % 4 == 0 ? 0 : data[1];
  evidence.outcome.signal = data[1];
  evidence.last_stage = kStages[data[2] % std::size(kStages)];
  const std::string rest(reinterpret_cast<const char*>(data) + 3, size - 3);
  const auto split = rest.find('\0');
  const auto result_text = rest.substr(0, split);
  evidence.stderr_text = split == std::string::npos ? rest : rest.substr(split + 1);
  // Read as a cell's result file is (check/module_inspection.cpp evidence_from_files): the
  // schema's check and the conversion, a breach kept as the cell's protocol problem.
  try {
    auto read =
        portcheck::try_read_cell_answer("compile_result", util::parse_json_bounded(result_text));
    evidence.result = std::move(read.value);
    if (!evidence.result) evidence.protocol_problem = read.problem;
  } catch (const util::JsonInputError&) {
  }
  const auto c = portcheck::classify(evidence);
  (void)portcheck::last_stage_from_progress(evidence.stderr_text);
  (void)portcheck::normalize_ir(evidence.stderr_text);
  return 0;
}
