#pragma once
#include <nlohmann/json.hpp>

#include "src/report.hpp"

namespace portcheck {

inline constexpr int kReportSchemaVersion = 1;

// The documented JSON report (docs/report-schema.md).
nlohmann::json report_to_json(const Report& report);

}  // namespace portcheck
