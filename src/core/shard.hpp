#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/core/report.hpp"

namespace portcheck {

// "K/N": this run compiles the K-th (1-based) of N parts of the matrix.
std::optional<ShardInfo> parse_shard(const std::string& text, std::string* error);

// The cells of shard `shard`: longest expected first, each to the least loaded part (ties to the
// lowest part), so the N parts are balanced by expected cost. Costs and keys must be derived from
// the manifest alone, so that every runner computes the same partition.
std::vector<std::size_t> select_shard(const std::vector<double>& costs,
                                      const std::vector<std::string>& keys, const ShardInfo& shard);

// One report from shard reports of the same matrix (same manifest digest, same tool version).
// Throws UsageError naming the files that do not belong together, shards of different counts,
// a shard given twice, and shards missing from the set, unless `allow_missing_shards`: then the
// merged report names them (Report::missing_shards) and their cells are unchecked.
Report merge_reports(const std::vector<Report>& parts, const std::vector<std::string>& origins,
                     bool allow_missing_shards = false);

}  // namespace portcheck
