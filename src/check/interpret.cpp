#include "src/check/interpret.hpp"

#include <algorithm>

#include <fmt/format.h>

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

// What the release's autotuner does with a config that fails so (compile/autotune_rules.py).
void take_autotuner_answer(CellResult& cell, const std::optional<AutotunerAnswer>& answer) {
  if (!answer) return;
  cell.autotuner_skips = answer->skips;
  cell.autotuner_raises = answer->raises;
}

// What the worker measured of the compile, failed or not.
void take_result(CellResult& cell, const CellAnswer& r) {
  double sum = 0;
  for (const auto& [stage, seconds] : r.stages) {
    cell.stages[stage] = seconds;
    sum += seconds;
  }
  cell.compile_s = r.compile_s.value_or(sum);
  if (r.metadata) cell.metadata = *r.metadata;
  if (r.sizes) cell.sizes = *r.sizes;
  if (r.resources) cell.resources = to_json(*r.resources);
  cell.exported = r.exported;
  cell.repro = r.repro;
  take_autotuner_answer(cell, r.autotuner);
  cell.shared_with = r.shared_with.value_or("");
  cell.ttir_key = r.ttir_key.value_or("");
  if (r.output_error)
    cell.output_error =
        fmt::format("cannot write {}: {}", r.output_error->path, r.output_error->error);
  cell.kernel_source = r.source;
}

// The traceback and what was printed, the end kept when they are long.
std::string failure_log(const CellEvidence& evidence) {
  std::string log;
  if (evidence.result && evidence.result->error) log = evidence.result->error->traceback;
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
                  const std::optional<LaunchVerdict>& verdict) {
  const auto limits = judgement.launch_limits.for_target(target);
  if (!limits || !verdict) return;
  cell.launch = nlohmann::json{
      {"needs", verdict->needs}, {"limits", limits->to_json()}, {"problems", verdict->problems}};
  if (verdict->problems.empty() || judgement.launch_limits_warn) return;
  fail(cell, FailureKind::launch_limit, "launch", util::join(verdict->problems, "; "));
  take_autotuner_answer(cell, verdict->autotuner);
}

Status status_of(const CellResult& cell) {
  const Status failing = cell.kind == FailureKind::launch_limit ? Status::launch : Status::failed;
  if (cell.kind != FailureKind::none) return cell.expected_failure ? Status::xfail : failing;
  return cell.expected_failure ? Status::xpass : Status::ok;
}

}  // namespace

CellResult interpret(const PlannedCell& plan, const CellInput& input, const Judgement& judgement) {
  CellResult cell = identity_of(plan, judgement.triton_version);
  cell.predicted = input.predicted ? input.predicted->to_json() : nlohmann::json();
  cell.cached = input.cached;
  if (!input.unsupported_target.empty()) {
    fail(cell, FailureKind::unsupported_target, "target", input.unsupported_target);
  } else if (input.evidence) {
    take_evidence(cell, *input.evidence);
    if (cell.kind == FailureKind::none && input.evidence->result)
      judge_launch(cell, plan.target, judgement, input.evidence->result->launch);
  } else if (input.predicted) {
    fail(cell, FailureKind::predicted, "static", input.predicted->reason);
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
