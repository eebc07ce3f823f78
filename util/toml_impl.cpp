// toml++'s implementation, compiled once for the whole tool: every other unit includes the header
// with TOML_HEADER_ONLY=0 (set by cmake/dependencies.cmake), which keeps builds fast and needs no
// libtomlplusplus at run time.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
