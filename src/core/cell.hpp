#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/kernel_facts.hpp"
#include "src/core/target.hpp"

namespace portcheck {

// launch: compiled, but needs more than the target allows at launch (--launch-limits error).
// unchecked: not compiled (--static-only) and not predicted to fail.
// skipped: a config of an autotuned launch that fails on the target with what that release's
// autotuner skips (OutOfResources, PTXASError, ...), while the launch keeps other configs: Triton
// benchmarks the rest and runs the best. Not a failure; its kind and message say why it is skipped.
enum class Status { ok, failed, xfail, xpass, launch, unchecked, skipped };

// Each status's name in reports and the result cache. One row per status, in enum order.
struct StatusRow {
  Status value;
  std::string_view name;
};
inline constexpr auto kStatuses = std::to_array<StatusRow>({
    {Status::ok, "ok"},
    {Status::failed, "failed"},
    {Status::xfail, "xfail"},
    {Status::xpass, "xpass"},
    {Status::launch, "launch"},
    {Status::unchecked, "unchecked"},
    {Status::skipped, "skipped"},
});

// Why a cell failed. `internal_error` is a bug of ours and is never blamed on the kernel.
// A new kind is an enumerator and its row in kFailureKinds below (then the rule in
// check/classify.cpp that recognises it, if the compiler's output is what tells it apart).
enum class FailureKind {
  none,
  frontend_error,
  mlir_error,
  llvm_error,
  assembler_error,
  timeout,
  crash,
  oom,
  import_error,
  internal_error,
  predicted,     // not compiled: the static pre-checks say it fails (--static skip / --static-only)
  launch_limit,  // compiled; exceeds a launch limit of the target
  // not compiled: this environment's Triton cannot compile for the target, another requested
  // release can (a multi-version run; with no such release the run is exit 2)
  unsupported_target,
};

// Each kind's name (reports, fingerprints, the result cache: changing one changes them all), the
// short label a matrix cell shows, and whether a compile ran (what `repro` can replay). One row
// per kind, in enum order.
struct FailureKindRow {
  FailureKind value;
  std::string_view name;
  std::string_view label;
  bool compiled;
};
inline constexpr auto kFailureKinds = std::to_array<FailureKindRow>({
    {FailureKind::none, "", "ok", false},
    {FailureKind::frontend_error, "frontend-error", "front", true},
    {FailureKind::mlir_error, "mlir-error", "mlir", true},
    {FailureKind::llvm_error, "llvm-error", "llvm", true},
    {FailureKind::assembler_error, "assembler-error", "asm", true},
    {FailureKind::timeout, "timeout", "timeout", true},
    {FailureKind::crash, "crash", "crash", true},
    {FailureKind::oom, "oom", "oom", true},
    {FailureKind::import_error, "import-error", "import", false},
    {FailureKind::internal_error, "internal-error", "internal", false},
    {FailureKind::predicted, "predicted", "pred", false},
    {FailureKind::launch_limit, "launch-limit", "launch", true},
    {FailureKind::unsupported_target, "unsupported-target", "target", false},
});

// A failing verdict the row did not expect: a compile's failure and a launch-limit verdict
// alike. Only these can be new (absent from a baseline); xfail is expected.
constexpr bool is_unexpected_failure(Status status) {
  return status == Status::failed || status == Status::launch;
}

// Both directions read the tables above; "?" names a value without a row.
std::string to_string(Status status);
std::string to_string(FailureKind kind);
std::optional<Status> status_from_string(const std::string& text);
std::optional<FailureKind> kind_from_string(const std::string& text);
// The short label a matrix cell shows: "front", "mlir", "asm", ...
std::string short_label(FailureKind kind);
// A failure that came from (or during) a compile, which a reproducer can replay.
bool failed_in_compile(FailureKind kind);

// One autotuned launch (the manifest's `autotune`) on one target and Triton: how many of its
// configs that target's autotuner benchmarks, and how many of them compile and launch there.
struct AutotunedLaunch {
  std::string name;   // within the row's [[kernel]]
  int configs = 0;    // its configs checked on this target
  int remaining = 0;  // of them, those that neither fail nor are skipped: 0 fails the launch
};

struct SourceLocation {
  std::string file;
  int line = 0;
};

// One kernel row x one target x one Triton: everything a report needs.
struct CellResult {
  std::string kernel;  // the row's display name, "dot_small[int8]"
  std::string base_kernel;
  std::string variant;
  std::string target;
  std::string triton;  // the label the run uses for this environment: "current" or a version
  std::string triton_version;
  Status status = Status::ok;
  FailureKind kind = FailureKind::none;
  std::string stage;    // the stage that failed, or empty
  std::string pass;     // the MLIR pass, when known
  std::string message;  // the decisive line
  std::string fingerprint;
  bool is_new = false;
  bool expected_failure = false;
  double compile_s = 0;
  double wall_s = 0;
  double waited_s = 0;         // of wall_s, waiting for its process (a zygote's import)
  double started_s = 0;        // when its wall_s began, in seconds from the run's start
  bool rerun_fresh = false;    // its verdict is a fresh process's (check/fork_hazard.hpp)
  double first_attempt_s = 0;  // with rerun_fresh: of wall_s, the forked attempt run again
  nlohmann::json stages = nlohmann::json::object();
  KernelMetadata metadata;  // for compiled cells (the report writes it with to_json)
  nlohmann::json sizes = nlohmann::json::object();
  nlohmann::json resources = nlohmann::json::object();
  std::string log;
  std::optional<SourceLocation> kernel_source;  // the def
  std::optional<SourceLocation> error_source;   // the failing line, when the compiler said it
  bool cached = false;  // served from the result cache, not compiled in this run
  // --reduce: not compiled; the verdict of this row, which differs only in facets the reduction
  // groups away (check/reduce.hpp). Empty for a compiled (or cached) cell.
  std::string represented_by;
  // Compiled in a batch after another cell of the same kernel and target whose frontend printed
  // the same TTIR under the same options: the backend ran for that row, and this verdict is its
  // (proven equal, where represented_by assumes it). Empty otherwise.
  std::string shared_with;
  // The frontend's TTIR, target and options, hashed: cells with equal keys compile alike.
  std::string ttir_key;
  nlohmann::json predicted;  // null, or the static pre-checks' {reason, stage, what, name}
  nlohmann::json launch;     // null, or {needs, limits, problems} for compiled cells
  // What the worker exported (export's files, params and launch), when it was asked to.
  std::optional<ExportFiles> exported;
  // The reproducer the worker wrote (`repro`), or why it could not.
  std::optional<ReproducerText> repro;
  bool in_baseline = false;  // failed as the baseline says it did: not new
  // The device personas whose host code chose this row's options, when none is of this target's
  // vendor (`capture --as`): a launch-limit verdict then says what another vendor's choices would
  // need here, not what this target is launched with, and is not new.
  std::vector<std::string> host_choices_of;
  // What the worker said this release's autotuner does with the cell's failure: skips the config
  // (and the launch goes on with the others) or lets `autotuner_raises` reach the user's call.
  // Empty `autotuner_raises`: no failure the worker judged (a timeout, a crash, an import error).
  bool autotuner_skips = false;
  std::string autotuner_raises;
  // For a config of autotuned launches: the launch it decides least well on this target (the
  // fewest configs remaining) - check/autotuned_launches.hpp. Empty for a row launched as is.
  std::optional<AutotunedLaunch> autotuned;
  std::string why;  // from the known-failure table
  // "cannot write PATH: OS error" when the worker could not write this cell's --save-ir or
  // export files (a full disk, no permission): the run's environment problem, not the cell's.
  std::string output_error;
  std::string link;

  // A launch-limit verdict on options another vendor's host code chose (see host_choices_of).
  [[nodiscard]] bool foreign_launch_verdict() const {
    return status == Status::launch && !host_choices_of.empty();
  }

  [[nodiscard]] bool failed_outcome() const {
    return status == Status::failed || status == Status::xfail || status == Status::launch;
  }
};

// For a config of an autotuned launch, what every report format adds to its message: for a
// skipped one, that the autotuner skips it and how many configs remain; for one red because no
// config is left, that; else "".
std::string autotuner_note(const CellResult& cell);

// For a launch-limit verdict on another vendor's host choices (foreign_launch_verdict), the words
// every report format adds to its message, so no one takes it for this target's breakage; else "".
std::string host_choices_note(const CellResult& cell);
// " [the note]", or "" for any other cell: for appending to a message.
std::string bracketed_host_choices_note(const CellResult& cell);

}  // namespace portcheck
