#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/report.hpp"

namespace portcheck {

// A failure known before this run: which cell, and how it failed.
struct BaselineEntry {
  std::string row;
  std::string target;
  std::string triton;
  std::string fingerprint;
  std::string kind;
  std::string message;
};

// Reads a baseline written by --write-baseline, or takes the failures of any JSON report.
std::vector<BaselineEntry> load_baseline(const std::filesystem::path& file);

// The small, sorted, reviewable file --write-baseline writes: today's failures.
std::string baseline_to_json(const Report& report);

// What the JSON report and SARIF's run properties say of an applied baseline: {origin, fixed:
// [{row, target, triton, fingerprint, kind, message}]}. `text` is applied to the free text (SARIF
// needs valid UTF-8; the JSON report keeps the bytes and replaces them when it is dumped).
nlohmann::json baseline_summary_json(const BaselineSummary& baseline,
                                     std::string (*text)(std::string_view) = nullptr);

// Marks failures that the baseline already has (same cell, same fingerprint) as not new, and
// records in the report the baseline failures that now pass. A cell that fails differently from
// its baseline entry is new.
void apply_baseline(Report& report, const std::vector<BaselineEntry>& baseline,
                    const std::string& origin);

}  // namespace portcheck
