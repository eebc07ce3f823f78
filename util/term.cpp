#include "util/term.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace util {

bool is_terminal(std::FILE* stream) { return ::isatty(::fileno(stream)) == 1; }

bool use_colour(std::FILE* stream) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && *no_colour != '\0') return false;
  const char* force = std::getenv("CLICOLOR_FORCE");
  if (force != nullptr && *force != '\0' && std::strcmp(force, "0") != 0) return true;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return is_terminal(stream);
}

}  // namespace util
