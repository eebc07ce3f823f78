#pragma once
#include <string>
#include <vector>

#include "src/core/report.hpp"

// What every renderer shares: failures grouped by fingerprint, and one row per Triton version.
namespace portcheck {

// A failure group: the cells that share one fingerprint, lettered A, B, ... in matrix order.
struct FailureGroup {
  std::string letter;
  std::string fingerprint;
  std::vector<const CellResult*> cells;
};

// The failed cells (failed_outcome()) of the report's rows and targets, grouped by fingerprint;
// groups and their cells in matrix order (rows, then targets).
std::vector<FailureGroup> group_failures(const Report& report);

// For formats that show one cell per row and target: when a report holds several Triton
// environments, each row becomes one row per version ("axpy · triton 3.8.0"). Otherwise a copy.
Report one_row_per_version(const Report& report);

}  // namespace portcheck
