#pragma once
// The capture hook's capture_record (python/portcheck_worker/protocol.schema.json), one JSON line
// of launches-PID.jsonl, as the tool uses it: read once where a line enters
// (read_capture_record: the schema's check and the conversion in one place), a struct after.
// tests/unit/worker_answers_test.cpp holds the structs to the schema.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/run/worker_protocol.hpp"

namespace portcheck {

// One launch recorded by the capture hook (python/portcheck_worker/capture/hook.py): Triton's own
// serialised specialisation plus what the hook knew about the launch.
struct CapturedLaunch {
  std::string module;     // "sample_pkg.kernels"
  std::string qualname;   // "add_kernel"
  std::string attribute;  // module-level name holding it (fast = triton.jit(_impl)); else qualname
  std::filesystem::path file;
  int line = 0;
  std::optional<std::filesystem::path> import_root;  // sys.path entry it came from, if importable
  std::vector<std::string> arg_names;
  std::string not_importable;  // why `check` could not import it again; empty when it can
  // The text of the file that defines it, when that module was generated at run time and cannot
  // be imported again by name: saved beside the manifest (kGeneratedFolder) and checked from there.
  std::string generated_source;
  std::vector<std::filesystem::path> generated_paths;  // sys.path entries its added imports need
  nlohmann::json specialization;                       // serialize_specialization_data's object
  nlohmann::json explicit_options = nlohmann::json::object();  // options the caller passed
  std::string site;      // "/abs/file.py:12", the caller outside Triton
  std::string test;      // pytest's node id, empty outside pytest
  std::string persona;   // the device the hook answered as ("hip:gfx942"), or the real one's
  std::string identity;  // names it in an autotuned launch's record; empty from an older hook
  // What the hook says of the launch that nothing here reads, kept so the record reads back whole.
  std::string mode;  // the capture mode
  bool warmup = false;
  struct Autotune {
    std::optional<std::string> config;
    std::optional<std::int64_t> count;
    std::optional<std::int64_t> index;
  };
  std::optional<Autotune> autotune;  // the autotuner's config of this launch, when it had one
};

// One autotuned launch the hook saw: the identities of its configs' launch records.
struct CapturedAutotunedLaunch {
  std::vector<std::string> configs;
  std::string persona;
};

// Something the hook could not record, said once.
struct CaptureWarning {
  std::string warning;
};

using CaptureRecord = std::variant<CapturedLaunch, CapturedAutotunedLaunch, CaptureWarning>;

// `line` checked against the schema's capture_record and converted; the problem when it breaks
// it (a hook of another install, or a process that corrupted its output).
[[nodiscard]] Checked<CaptureRecord> read_capture_record(const nlohmann::json& line);

// The record again, as the hook wrote it (less the nulls that read as absent).
[[nodiscard]] nlohmann::json record_message(const CaptureRecord& record);

}  // namespace portcheck
