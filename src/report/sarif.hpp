#pragma once
#include <nlohmann/json.hpp>

#include "src/core/report.hpp"

namespace portcheck {

// SARIF 2.1.0: one rule per failure fingerprint, one result per failing cell, located at the
// line the compiler blamed (else the kernel's def), with partialFingerprints for deduplication.
nlohmann::json render_sarif(const Report& report);

}  // namespace portcheck
