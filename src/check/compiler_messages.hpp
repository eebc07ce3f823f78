#pragma once
#include <optional>
#include <string>

#include "src/core/cell.hpp"

namespace portcheck {

// Scanners for what Triton and the compilers under it print, each written against real output
// (tests/unit/data). They scan by hand rather than with std::regex: libstdc++'s matcher recurses
// once per character it matches, and a stderr line of 20,000+ characters (a kernel's own exception
// text, say) overflowed the stack (issue 14).

// A compiler's error line: its message and, where it names one, the source place.
struct Diagnostic {
  std::string message;
  std::optional<SourceLocation> where;
};

// `AttributeError("module ... 'tgamma'")` -> `AttributeError: module ... 'tgamma'`
std::string unwrap_exception_repr(const std::string& line);
std::string last_nonempty_line(const std::string& text);

// The first MLIR diagnostic ("FILE:12:9: error: MESSAGE", "error: ...", "loc(...): error: ...").
std::optional<Diagnostic> first_mlir_error(const std::string& stderr_text);
// "Pipeline failed while executing [`PASS`" -> PASS.
std::string failing_pass(const std::string& stderr_text);
// "ptxas-blackwell /tmp/tmpab.ptx, line 289; error   : Feature ..." -> "ptxas-blackwell: Feature
// ...": the first such line of `text`, or empty.
std::string ptxas_message(const std::string& text);

// The first error line a backend tool printed, in the order printed: the cause comes first, the
// consequences (a linker that found no object, a wrapper exception) after it. Recognises
// "LLVM ERROR: ...", "error: ...", "BUFFER:12:9: error: ..." (an assembler's buffer, named in
// the message: "triton-amdgpu-assembler: invalid instruction") and "TOOL: error: ..." ("ld.lld:
// ..."). Nullopt when there is none.
std::optional<std::string> first_backend_error(const std::string& stderr_text);

}  // namespace portcheck
