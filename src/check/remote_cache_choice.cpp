#include "src/check/remote_cache_choice.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "src/core/errors.hpp"

namespace portcheck {
namespace {

constexpr double kDefaultTimeoutSeconds = 2;
// 0 ms would mean "no timeout at all" to both libcurl and hiredis.
constexpr double kMinCacheTimeoutSeconds = 0.001;
constexpr double kMaxCacheTimeoutSeconds = 600;

std::optional<std::string> from_environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

constexpr const char* kManifestSource = "[defaults] cache_url";

bool truthy(const std::string& text) { return text == "1" || text == "true" || text == "yes"; }

double timeout_seconds(const CheckOptions& options) {
  if (options.cache_timeout_s) return *options.cache_timeout_s;  // checked by the command line
  const auto text = from_environment("TRITON_PORTCHECK_CACHE_TIMEOUT");
  if (!text) return kDefaultTimeoutSeconds;
  std::size_t used = 0;
  double seconds = 0;
  try {
    seconds = std::stod(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() ||
      !(seconds >= kMinCacheTimeoutSeconds && seconds <= kMaxCacheTimeoutSeconds))
    throw UsageError(
        fmt::format("TRITON_PORTCHECK_CACHE_TIMEOUT: '{}' is not a number of seconds from {} to {}",
                    *text, kMinCacheTimeoutSeconds, kMaxCacheTimeoutSeconds));
  return seconds;
}

}  // namespace

std::optional<RemoteCacheSettings> remote_cache_choice(const CheckOptions& options,
                                                       const Manifest& manifest) {
  if (!options.use_cache) return std::nullopt;
  std::optional<std::string> text = options.cache_url;
  std::string source = "--cache-url";
  if (!text) {
    text = from_environment("TRITON_PORTCHECK_CACHE_URL");
    source = "TRITON_PORTCHECK_CACHE_URL";
  }
  if (!text) {
    text = manifest.cache_url;
    source = kManifestSource;
  }
  if (!text || *text == "none") return std::nullopt;
  std::string problem;
  auto url = parse_remote_url(*text, &problem);
  if (!url) throw UsageError(fmt::format("{} '{}': {}", source, redact_url(*text), problem));
  RemoteCacheSettings settings;
  settings.url = std::move(*url);
  // The manifest's cache_readonly goes with the manifest's URL: a team commits "laptops read",
  // and CI, which names its cache itself, still writes.
  settings.readonly =
      options.cache_readonly ||
      truthy(from_environment("TRITON_PORTCHECK_CACHE_READONLY").value_or(std::string())) ||
      (source == kManifestSource && manifest.cache_readonly);
  settings.timeout =
      std::max(std::chrono::milliseconds(1),
               std::chrono::milliseconds(static_cast<long long>(timeout_seconds(options) * 1000)));
  return settings;
}

}  // namespace portcheck
