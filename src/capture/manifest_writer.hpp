#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/capture/capture_rows.hpp"

namespace portcheck {

// How captured rows meet a manifest that already exists.
enum class MergeMode {
  create,  // a new file
  append,  // keep every existing row; add the captured rows that are not there yet
  update,  // replace the earlier captured rows of the kernels seen now; keep the rest
};

struct MergeResult {
  std::string text;
  int rows_written = 0;   // captured rows now in the file (new or replacing)
  int rows_replaced = 0;  // earlier captured rows removed by --update
  int rows_existing = 0;  // captured rows already present as written rows, not added again
  std::vector<std::string> warnings;  // annotations (xfail, ...) removed with a row
};

// A TOML value for a JSON one (strings escaped, floats always with a '.' or exponent).
std::string toml_value(const nlohmann::json& value);

// The text of a manifest holding only captured rows. `header` lines are written as comments.
MergeResult render_captured_manifest(const std::vector<CapturedKernel>& kernels,
                                     const std::vector<std::string>& header);

// Merges captured rows into the text of an existing manifest, editing only the captured
// blocks it replaces and appending the rest: comments, hand-written rows and layout stay. An
// --update carries the xfail, targets, timeout and max_rss lines of a replaced row (comments
// on them included) to the new row of the same name. Throws UsageError for a manifest it
// cannot read. On --update a first line written by capture is replaced by `header`'s first
// line; CRLF line endings stay CRLF.
MergeResult merge_captured_manifest(const std::filesystem::path& manifest_file,
                                    const std::string& existing_text,
                                    const std::vector<CapturedKernel>& kernels, MergeMode mode,
                                    const std::vector<std::string>& header = {});

}  // namespace portcheck
