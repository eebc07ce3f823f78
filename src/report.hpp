#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/cell.hpp"

namespace portcheck {

// Everything one `check` produced; every report format renders from this.
struct Report {
  std::string tool_version;
  nlohmann::json environment = nlohmann::json::object();  // triton, python, host, started, options
  std::string manifest;
  std::vector<std::string> targets;  // column order
  std::vector<std::string> rows;     // row order (display names)
  std::vector<CellResult> cells;     // row-major
  bool interrupted = false;
  double wall_s = 0;
};

// A failure group: the cells that share one fingerprint, lettered A, B, ... in matrix order.
struct FailureGroup {
  std::string letter;
  std::string fingerprint;
  std::vector<const CellResult*> cells;
};

std::vector<FailureGroup> group_failures(const Report& report);

}  // namespace portcheck
