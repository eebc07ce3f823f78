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
  (void)url->masked(text);  // any message, however it quotes the URL
  // What is shown is the text with exactly the password the parser found replaced by "***"
  // (checking that the password is absent from it instead is wrong: the user's tail and the mask
  // itself can spell one, as this harness found).
  const auto& password = url->password;
  if (url->kind != portcheck::RemoteUrl::Kind::redis || password.empty()) return 0;
  const auto slash = text.find('/', 8);
  const auto at = text.rfind('@', slash);
  if (at == std::string::npos || at < password.size()) std::abort();
  if (url->shown() != text.substr(0, at - password.size()) + "***" + text.substr(at)) std::abort();
  return 0;
}
