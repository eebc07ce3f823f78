#pragma once
// The report's `environment` block of one Triton environment's pass: what ran it (Triton, Python,
// host), with which options, and what it cost (memory, fork servers, the static pre-checks).
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/check/check_options.hpp"
#include "src/check/execute.hpp"
#include "src/check/plan.hpp"
#include "src/core/manifest.hpp"

namespace portcheck {

struct PassSummary {
  std::string label;     // the Triton environment: "current" or a version
  std::string manifest;  // as the report names it: the path, or "--demo"
  std::size_t jobs = 1;
  std::optional<std::filesystem::path> cache_root;  // nullopt: --no-cache
  std::chrono::system_clock::time_point started;
};

nlohmann::json environment_block(const CheckOptions& options, const Manifest& manifest,
                                 const Matrix& matrix, const ExecutedCells& executed,
                                 const PassSummary& pass);

}  // namespace portcheck
