#include "src/check/interpret.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "util/json_reader.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

CellResult identity_of(const PlannedCell& plan, const std::string& triton_version) {
  CellResult cell;
  const auto& row = *plan.row;
  cell.kernel = row.display_name();
  cell.base_kernel = row.kernel;
  cell.variant = row.variant;
  cell.target = plan.target.name();
  cell.triton = plan.label;
  cell.triton_version = triton_version;
  cell.host_choices_of = plan.host_choices_of;
  cell.expected_failure =
      std::find(row.xfail.begin(), row.xfail.end(), cell.target) != row.xfail.end();
  return cell;
}

void fail(CellResult& cell, FailureKind kind, std::string stage, std::string message) {
  cell.kind = kind;
  cell.stage = std::move(stage);
  cell.message = std::move(message);
  cell.fingerprint = fingerprint(cell.kind, cell.stage, cell.pass, cell.message);
}

// What the release's autotuner does with a config that fails so (compile/autotune_rules.py):
// checked against the protocol's autotuner_answer when the result was read.
void take_autotuner_answer(CellResult& cell, const nlohmann::json& answer) {
  if (!answer.is_object()) return;
  cell.autotuner_skips = answer.value("skips", false);
  cell.autotuner_raises = answer.value("raises", "");
}

// What the worker measured of the compile, failed or not.
void take_result(CellResult& cell, const nlohmann::json& r) {
  // The worker wrote `r`, but user code ran in its process: a value of the wrong type is dropped,
  // never thrown on.
  double sum = 0;
  if (const auto it = r.find("stages"); it != r.end() && it->is_object())
    for (const auto& [stage, seconds] : it->items())
      if (const auto s = util::finite_number(seconds)) {
        cell.stages[stage] = *s;
        sum += *s;
      }
  cell.compile_s = util::number_member(r, "compile_s").value_or(sum);
  if (r.contains("metadata")) cell.metadata = r["metadata"];
  if (r.contains("sizes")) cell.sizes = r["sizes"];
  if (r.contains("resources")) cell.resources = r["resources"];
  if (r.contains("export") && r["export"].is_object()) cell.exported = r["export"];
  if (r.contains("repro") && r["repro"].is_object()) cell.repro = r["repro"];
  take_autotuner_answer(cell, r.value("autotuner", nlohmann::json()));
  cell.shared_with = util::string_member(r, "shared_with", "");
  cell.ttir_key = util::string_member(r, "ttir_key", "");
  if (const auto it = r.find("output_error"); it != r.end() && it->is_object())
    cell.output_error = fmt::format("cannot write {}: {}", util::string_member(*it, "path", "?"),
                                    util::string_member(*it, "error", "unknown error"));
  if (const auto it = r.find("source"); it != r.end() && it->is_object())
    cell.kernel_source =
        SourceLocation{util::string_member(*it, "file", ""),
                       static_cast<int>(util::integer_member(*it, "line", 0, INT_MAX).value_or(0))};
}

// The traceback and what was printed, the end kept when they are long.
std::string failure_log(const CellEvidence& evidence) {
  std::string log;
  // Read leniently: the worker wrote it, but user code ran in its process.
  if (evidence.result && evidence.result->is_object() && evidence.result->contains("error"))
    log = util::string_member((*evidence.result)["error"], "traceback", "");
  if (!evidence.stderr_text.empty())
    log += (log.empty() ? "" : "\n--- stderr ---\n") + evidence.stderr_text;
  return log.size() > kCellLogLimit ? log.substr(log.size() - kCellLogLimit) : log;
}

void take_evidence(CellResult& cell, const CellEvidence& evidence) {
  const auto c = classify(evidence);
  cell.kind = c.kind;
  cell.stage = c.stage;
  cell.pass = c.pass;
  cell.message = c.message;
  cell.fingerprint = c.fingerprint;
  cell.error_source = c.error_source;
  cell.wall_s = evidence.outcome.wall_seconds;
  cell.waited_s = evidence.outcome.waited_seconds;
  if (evidence.result) take_result(cell, *evidence.result);
  if (cell.kind != FailureKind::none) cell.log = failure_log(evidence);
}

// A compiled cell is held to its target's launch limits. The worker judged its real metadata
// against the limits its request carried (python/portcheck_worker/compile/launch_rules.py, the
// rules' one home): `verdict` says what the kernel needs and what of it the target does not
// allow. Here that fails the cell, or with --launch-limits-warn is only reported.
void judge_launch(CellResult& cell, const Target& target, const Judgement& judgement,
                  const nlohmann::json& verdict) {
  const auto limits = judgement.launch_limits.for_target(target);
  if (!limits || !verdict.is_object()) return;
  // Checked against the protocol's launch_verdict when it was read: its problems are text.
  const auto problems =
      verdict.value("problems", nlohmann::json::array()).get<std::vector<std::string>>();
  cell.launch = nlohmann::json{{"needs", verdict.value("needs", nlohmann::json::object())},
                               {"limits", limits->to_json()},
                               {"problems", problems}};
  if (problems.empty() || judgement.launch_limits_warn) return;
  fail(cell, FailureKind::launch_limit, "launch", util::join(problems, "; "));
  take_autotuner_answer(cell, verdict.value("autotuner", nlohmann::json()));
}

Status status_of(const CellResult& cell) {
  const Status failing = cell.kind == FailureKind::launch_limit ? Status::launch : Status::failed;
  if (cell.kind != FailureKind::none) return cell.expected_failure ? Status::xfail : failing;
  return cell.expected_failure ? Status::xpass : Status::ok;
}

}  // namespace

CellResult interpret(const PlannedCell& plan, const CellInput& input, const Judgement& judgement) {
  CellResult cell = identity_of(plan, judgement.triton_version);
  cell.predicted = input.predicted;
  cell.cached = input.cached;
  if (!input.unsupported_target.empty()) {
    fail(cell, FailureKind::unsupported_target, "target", input.unsupported_target);
  } else if (input.evidence) {
    take_evidence(cell, *input.evidence);
    if (cell.kind == FailureKind::none && input.evidence->result)
      judge_launch(cell, plan.target, judgement,
                   input.evidence->result->value("launch", nlohmann::json()));
  } else if (input.predicted.is_object()) {
    fail(cell, FailureKind::predicted, "static",
         util::string_member(input.predicted, "reason", ""));
  } else {
    cell.status = Status::unchecked;  // --static-only, and nothing predicted against it
    return cell;
  }
  cell.status = status_of(cell);
  cell.is_new = is_unexpected_failure(cell.status) && !cell.foreign_launch_verdict();
  if (const auto* known = judgement.known.find(cell.fingerprint);
      known != nullptr && cell.kind != FailureKind::none) {
    cell.why = known->why;
    cell.link = known->link;
  }
  return cell;
}

}  // namespace portcheck
