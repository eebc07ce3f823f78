#pragma once
#include <filesystem>
#include <string>
#include <vector>

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

// Marks failures that the baseline already has (same cell, same fingerprint) as not new, and
// records in the report the baseline failures that now pass. A cell that fails differently from
// its baseline entry is new.
void apply_baseline(Report& report, const std::vector<BaselineEntry>& baseline,
                    const std::string& origin);

}  // namespace portcheck
