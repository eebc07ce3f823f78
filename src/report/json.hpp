#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/report.hpp"

namespace portcheck {

inline constexpr int kReportSchemaVersion = 1;

// The documented JSON report (docs/report-schema.md).
nlohmann::json report_to_json(const Report& report);
// The same, as report_to_json(report).dump(2) writes it plus a newline, made one cell at a time:
// the report as one tree peaked at 12 KB a cell (heaptrack, 10,125 cells), its text is 2.
std::string report_to_json_text(const Report& report);

// The inverse, for reports read back (merge, report, diff, baselines). Throws UsageError naming
// `origin` and the field when the JSON is not a report of a schema version we read.
Report report_from_json(const nlohmann::json& json, const std::string& origin);

// Reads and parses a JSON report file (UsageError when missing or malformed).
Report load_report(const std::filesystem::path& file);

// A JSON file from a user (a report, a baseline), parsed with a bound on nesting: UsageError
// "LABEL FILE: line L, column C: ..." when unreadable or malformed (`label`, like "--baseline",
// may be empty).
nlohmann::json read_json_input(const std::filesystem::path& file, const std::string& label);

}  // namespace portcheck
