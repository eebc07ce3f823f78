// toml++'s implementation, compiled once for the whole tool: every other unit includes the header
// with TOML_HEADER_ONLY=0 (set by cmake/dependencies.cmake), which keeps builds fast and needs no
// libtomlplusplus at run time.
//
// toml++ 3.3's parser asserts (`TOML_ASSERT_ASSUME`) that a table header's key starts with a key
// character, which `[`a]` breaks: a build without NDEBUG aborts, while the check that follows
// the assertion reports the error properly ("expected bare key starting character"), as g++'s
// NDEBUG build (the tool, the wheel) does. The fuzzer found it (fuzz/corpus/manifest/
// finding-table-header-backtick.toml). Its internal assertions are compiled out in every build:
// the parser's own checks handle bad input. (clang with NDEBUG would turn the assertion into
// __builtin_assume; the tool is built with g++.)
#define TOML_ASSERT(expr) static_cast<void>(0)
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
