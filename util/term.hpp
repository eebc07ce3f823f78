#pragma once
#include <cstdio>

namespace util {

// Colour on a terminal only; NO_COLOR turns it off, CLICOLOR_FORCE turns it on even when piped.
bool use_colour(std::FILE* stream);
bool is_terminal(std::FILE* stream);

}  // namespace util
