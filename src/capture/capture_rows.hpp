#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/capture/capture_record.hpp"

namespace portcheck {

struct CaptureRecords {
  std::vector<CapturedLaunch> launches;
  std::vector<CapturedAutotunedLaunch> autotuned;
  std::vector<std::string> warnings;  // what the hook could not record, deduplicated
  int bad_lines = 0;                  // torn or unreadable lines, skipped
  std::string first_bad_line;         // "FILE line N: why", for the warning
};

// Reads every launches-*.jsonl file of a capture folder and the folders under it (one per persona).
CaptureRecords read_capture_records(const std::filesystem::path& folder);

using OrderedFields = std::vector<std::pair<std::string, nlohmann::json>>;

// One row as the manifest will spell it.
struct CapturedRow {
  std::string variant;  // empty for a kernel with a single row
  // The name the facets that tell the rows apart make, when it is too long to be `variant`
  // (which is then its readable start and a hash of it); empty otherwise.
  std::string variant_in_full;
  OrderedFields signature;  // argument -> "*fp16:16", in argument order
  OrderedFields constants;  // argument -> encoded constexpr value
  OrderedFields options;    // only the options the caller passed (per-target defaults stay)
  std::optional<std::string> specialization;  // JSON, when the row is not expressible in fields
  std::string captured;                       // the test (or call site) that launched it
  std::vector<std::string> captured_as;       // the personas whose runs launched it, in first order
  // The autotuned launches (named within its kernel: "launch-1") that benchmark it as a config.
  std::vector<std::string> autotune;
  [[nodiscard]] std::string identity() const;  // equal for equal compiles
};

struct CapturedKernel {
  std::string name;                      // row name in the manifest
  std::string target;                    // "module:function" or "path.py:function"
  std::vector<std::string> python_path;  // folders relative to the manifest, to import it
  std::string source_file;               // "sample_pkg/kernels.py", where it is defined
  int source_line = 0;
  std::vector<std::string> arg_names;
  std::vector<CapturedRow> rows;
  // For a kernel generated at run time: its module's file name in kGeneratedFolder and text.
  std::string generated_file;
  std::string generated_source;
};

struct CaptureSummary {
  std::vector<CapturedKernel> kernels;
  std::vector<std::string> warnings;  // launches that cannot become a row, and why
  int launches = 0;
};

// Deduplicates launches into rows, one kernel per Python function, and names the variants by
// what differs between them (dtype, constexpr values, alignment, ints equal to 1, options). The
// rows of each autotuned launch (`autotuned`, whose configs name launches by identity) get its
// name in their `autotune`.
CaptureSummary build_captured_kernels(const std::vector<CapturedLaunch>& launches,
                                      const std::filesystem::path& manifest_dir,
                                      const std::vector<CapturedAutotunedLaunch>& autotuned = {});

// (Re)names a kernel's rows by what differs between them; a single row gets no variant name.
void name_rows(CapturedKernel& kernel);

// Converts one launch into a row (without its variant name); `launch.specialization` must have
// the shape a manifest accepts (specialization_shape_problem empty: read_capture_records skips
// records without it). Exposed for tests.
CapturedRow row_from_launch(const CapturedLaunch& launch);

}  // namespace portcheck
