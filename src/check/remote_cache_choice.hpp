#pragma once
// Which shared remote cache a check uses, from the places a user can name one: the command line
// first, then the environment (how CI sets it for every job), then the manifest's [defaults]
// (a team's default, committed beside the kernels).
#include <optional>

#include "src/check/check_options.hpp"
#include "src/core/manifest.hpp"
#include "src/run/tiered_cache.hpp"

namespace portcheck {

// nullopt: no remote (none named, "none", or --no-cache). Throws UsageError naming the source
// of a URL or timeout that does not parse (a manifest's was checked when it was loaded).
//   $TRITON_PORTCHECK_CACHE_URL, $TRITON_PORTCHECK_CACHE_READONLY (1, true, yes),
//   $TRITON_PORTCHECK_CACHE_TIMEOUT (seconds; default 2).
// Read-only when --cache-readonly or $TRITON_PORTCHECK_CACHE_READONLY says so, or when the URL is
// the manifest's and the manifest says cache_readonly = true.
std::optional<RemoteCacheSettings> remote_cache_choice(const CheckOptions& options,
                                                       const Manifest& manifest);

}  // namespace portcheck
