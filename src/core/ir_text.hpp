#pragma once
// Compiler text with what differs between runs, machines and folders taken out: the one place
// that rewrites paths and IR, for the fingerprints of failures (check/classify.cpp) and for
// `diff --ir` (versions/ir_diff.cpp).
#include <string>
#include <string_view>

namespace portcheck {

// Where an absolute path ends. Both syntaxes end it at white space and / : ' " ` , ; ( ).
//   message: compiler messages. Fingerprints are made with this rule and are stored (baselines,
//            data/known-failures.toml, SARIF alert identities), so it stays as it was written.
//   ir:      IR text also ends a path at < > [ ] { }: IR's own punctuation, never part of a path
//            there (#di_file<"...">, !{...}, [%rd2]).
enum class PathSyntax { message, ir };

// "/home/me/demo/kernels.py" -> "<path>/kernels.py" (the file name is kept), and a temporary
// file, "/tmp/tmpab3x_9z.ptx" -> "<tmpfile>" (its name is random too).
std::string normalize_paths(std::string_view text, PathSyntax syntax);

// IR of any stage (ttir, ttgir, llir, ptx, amdgcn), line by line: SSA value names (%12, %arg3,
// %cst_0 -> %N, %cst), block labels, #loc references and loc(...) attributes, location-only lines
// (#locN = loc(...), PTX .loc, LLVM !DILocation), !dbg attachments, long hashes, hex addresses
// and paths (PathSyntax::ir) normalised, CR and trailing white space dropped, so that only real
// changes remain. Every line ends with '\n'.
std::string normalize_ir(std::string_view ir);

// Every SSA value name (%rows, %N_i32, %arg0, %0#1) as a bare "%": two IRs equal after this
// differ only in the names values got (releases name them after the source differently).
std::string without_value_names(std::string_view ir);

}  // namespace portcheck
