#pragma once
#include <string>
#include <string_view>

namespace portcheck {

// Folder names of a cell's files on disk (--save-ir DIR/<triton label>/<row>/<target>/, export
// DIR/<row>/<target>/). The check writes these folders and `diff --ir` reads them, so both take
// the names from here.
//
// A name made only of [A-Za-z0-9._-], not starting with '.' and at most kMaxPlainFolder long is
// its own folder ("axpy", "attention-fp16", "3.9.0"). Any other name gets a readable form (a
// variant's "[v]" as "-v", other characters as '_', a leading '.' as '_', cut to kMaxPlainFolder)
// and '~' plus 8 hex digits of the name's SHA-1: "dot_small[int8]" -> "dot_small-int8~<hash>".
// '~' never occurs in a plain name, so no two names share a folder ("scale[b]" and "scale-b"
// did), and no name is ".", "..", empty, holds a '/' or passes a file-name length limit.
inline constexpr std::size_t kMaxPlainFolder = 100;

std::string ir_row_folder(std::string_view row);
std::string ir_target_folder(std::string_view target);

}  // namespace portcheck
