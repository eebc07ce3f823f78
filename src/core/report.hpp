#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/cell.hpp"

namespace portcheck {

// What a passing cell proves and what it does not. Every format carries it, since a report is
// read without the tool that wrote it.
inline constexpr std::string_view kCompileOnlyDisclaimer =
    "Compile-only check, nothing was run on a GPU: a passing cell means Triton produced a binary "
    "for that target. It does not prove that the kernel launches on the device (its launch limits "
    "are predicted from the compiled metadata, not tried on a device), computes correct results, "
    "or performs well.";

// What a --baseline did to a report: where it came from and which of its failures now pass.
struct BaselineSummary {
  bool applied = false;
  std::string origin;
  struct Fixed {
    std::string row, target, triton, fingerprint, kind, message;
  };
  std::vector<Fixed> fixed;
};

// The part of the matrix a sharded run compiled.
struct ShardInfo {
  int index = 0;  // 1-based; 0: not sharded
  int count = 0;
};

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
  std::string manifest_digest;  // identifies the matrix, for merging shards
  ShardInfo shard;
  std::vector<std::string> merged_from;
  // "K/N" of each shard a merge went without (--allow-missing-shards): the cells no report
  // holds are unchecked, not "not planned", and the exit code says so.
  std::vector<std::string> missing_shards;
  BaselineSummary baseline;
  // What the run has to warn of (a manifest's deprecated key, no seccomp guard): said once by
  // the command that ran it (cli/common.hpp's say_warnings), however many runs a command makes.
  std::vector<std::string> warnings;

  // Some cells of the matrix were never checked: the run was interrupted or shards are missing.
  [[nodiscard]] bool incomplete() const { return interrupted || !missing_shards.empty(); }
};

}  // namespace portcheck
