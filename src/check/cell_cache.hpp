#pragma once
// A cell's evidence in the result cache (run/result_cache.hpp): what an entry keeps, how it is
// served again, and which evidence is worth keeping at all.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "src/check/classify.hpp"
#include "src/core/cell.hpp"

namespace portcheck {

// Enough of a compile to classify it again exactly as the first time. `origin` is where the
// kernel lived (the manifest's folder) when it was compiled.
nlohmann::json cache_entry(const std::string& key, const CellEvidence& evidence,
                           const std::filesystem::path& origin);

// The evidence an entry keeps. The same kernel checked out elsewhere (another CI runner, a moved
// project) has the same key; paths in its messages are moved to `origin`, where it lives now.
// nullopt when its result, so moved, is not a compile_result: a miss, as any damage is.
std::optional<CellEvidence> evidence_from_cache(const nlohmann::json& entry,
                                                const std::filesystem::path& origin);

// Timeouts, crashes and memory kills depend on the machine and the moment; internal errors are
// ours. Only a worker's own verdict on the compile is worth keeping.
bool cacheable(const CellEvidence& evidence, const CellResult& cell);

}  // namespace portcheck
