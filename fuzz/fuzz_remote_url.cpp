// Cache URLs (--cache-url, $TRITON_PORTCHECK_CACHE_URL, a manifest's cache_url): the parser may
// refuse any text but never throw or crash, and what it accepts is shown without its password.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/core/remote_url.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string problem;
  const auto url = portcheck::parse_remote_url(text, &problem);
  if (!url) {
    if (problem.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const auto shown = url->shown();
  // A password of a few characters may also occur by chance in the host; a longer one may not
  // survive into what is printed.
  if (url->password.size() >= 8 && shown.find(url->password) != std::string::npos &&
      url->host.find(url->password) == std::string::npos)
    std::abort();
  return 0;
}
