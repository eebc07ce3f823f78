#pragma once
// What the last checks did with their caches, for `cache stats`: one JSON line per run in
// <cache>/runs.jsonl. A line is written with one append (O_APPEND, under 4 KiB), so concurrent
// runs interleave whole lines; the file is cut back to its last lines when it grows.
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/run/tiered_cache.hpp"

namespace portcheck {

void record_cache_run(const std::filesystem::path& cache_root, const CacheCounters& counters,
                      const std::optional<RemoteCacheSettings>& remote);

// The last `count` runs, oldest first; lines that do not parse are skipped.
std::vector<nlohmann::json> recent_cache_runs(const std::filesystem::path& cache_root,
                                              std::size_t count);

}  // namespace portcheck
