#pragma once
#include <string>
#include <string_view>

namespace portcheck {

// Folder names of a cell's files on disk (--save-ir DIR/<triton label>/<row>/<target>/, export
// DIR/<row>/<target>/): "dot_small[int8]" -> "dot_small-int8", "cuda:90" -> "cuda_90". Any
// character outside [A-Za-z0-9._-] becomes '_' (also for the label). The check writes these
// folders and `diff --ir` reads them, so both take the names from here.
std::string ir_row_folder(std::string_view row);
std::string ir_target_folder(std::string_view target);

}  // namespace portcheck
