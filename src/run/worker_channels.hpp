#pragma once
// What passes between the tool and the worker outside the JSON messages: the worker's command
// line and exit codes, the environment variables the tool sets for it, the fork server and the
// capture hook, and the lines of the progress file and the batch log. Each is defined in the
// "x-channels" section of python/portcheck_worker/protocol.schema.json, beside the messages;
// the worker's names are in python/portcheck_worker/base/channels.py. Both sides are held to
// that section by tests (tests/unit/worker_channels_test.cpp and
// tests/integration/test_protocol_schema.py), so a name spelled differently on one side fails a
// test instead of a run.
#include <string_view>

namespace portcheck::channels {

// `PYTHON -m portcheck_worker COMMAND ...`: probe REQUEST RESULT, cell REQUEST RESULT
// [PROGRESS], serve.
inline constexpr std::string_view kWorkerModule = "portcheck_worker";
inline constexpr std::string_view kProbeCommand = "probe";
inline constexpr std::string_view kCellCommand = "cell";
inline constexpr std::string_view kServeCommand = "serve";

// The worker's exit codes other than 0 (a result was written) and a signal.
inline constexpr int kExitUsage = 2;        // a command line it does not know
inline constexpr int kExitEnvironment = 3;  // Triton does not import, or another protocol
inline constexpr int kExitBug = 4;          // a message broke the schema: a bug of ours

// Set by the tool for every worker process: its pid, which a cell's signal guard protects; and
// the run's scratch folder, by which its death watch finds the run's processes (read by no one).
inline constexpr std::string_view kToolPid = "TRITON_PORTCHECK_TOOL_PID";
inline constexpr std::string_view kRunMarker = "TRITON_PORTCHECK_RUN";
// Set for a version environment's worker: the invoking interpreter's site-packages.
inline constexpr std::string_view kInheritSite = "PORTCHECK_INHERIT_SITE";
// Set for the fork server: which server of the run it is, its memory budget, the run's jobs.
inline constexpr std::string_view kServerGeneration = "PORTCHECK_SERVER_GENERATION";
inline constexpr std::string_view kServerMaxRss = "PORTCHECK_SERVER_MAX_RSS";
inline constexpr std::string_view kServerJobs = "PORTCHECK_JOBS";
// Set by `capture` for the user's command and what it starts; every name starts with the prefix,
// which the tool removes from the environment it passes on before setting its own.
inline constexpr std::string_view kCapturePrefix = "PORTCHECK_CAPTURE_";
inline constexpr std::string_view kCaptureDir = "PORTCHECK_CAPTURE_DIR";
inline constexpr std::string_view kCaptureMode = "PORTCHECK_CAPTURE_MODE";
inline constexpr std::string_view kCaptureHookDir = "PORTCHECK_CAPTURE_HOOK_DIR";
inline constexpr std::string_view kCapturePersona = "PORTCHECK_CAPTURE_PERSONA";
inline constexpr std::string_view kCaptureFakeGpu = "PORTCHECK_CAPTURE_FAKE_GPU";

// A cell's progress file: "stage NAME" before each stage, and the marks of `--isolation
// process`'s parent around the life of the child that runs the cell.
inline constexpr std::string_view kStagePrefix = "stage ";
inline constexpr std::string_view kChildForked = "cell-parent forked";
inline constexpr std::string_view kChildEnded = "cell-parent child-ended";

// A batch's log: "begun|done CELL_ID MONOTONIC_SECONDS FIGURE" per cell; a file of the log's
// name with this suffix, created by the tool, asks the batch to begin no further cell.
inline constexpr std::string_view kBatchBegun = "begun";
inline constexpr std::string_view kBatchDone = "done";
inline constexpr std::string_view kBatchStopSuffix = ".stop";

}  // namespace portcheck::channels
