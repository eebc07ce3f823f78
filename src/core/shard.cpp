#include "src/core/shard.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "util/strings.hpp"

namespace portcheck {

std::optional<ShardInfo> parse_shard(const std::string& text, std::string* error) {
  const auto slash = text.find('/');
  ShardInfo shard;
  const auto parse = [](std::string_view s, int& out) {
    return !s.empty() &&
           std::from_chars(s.data(), s.data() + s.size(), out).ptr == s.data() + s.size();
  };
  if (slash == std::string::npos || !parse(std::string_view(text).substr(0, slash), shard.index) ||
      !parse(std::string_view(text).substr(slash + 1), shard.count) || shard.count < 1 ||
      shard.index < 1 || shard.index > shard.count) {
    if (error) *error = fmt::format("--shard {}: expected K/N with 1 <= K <= N, such as 2/4", text);
    return std::nullopt;
  }
  return shard;
}

std::vector<std::size_t> select_shard(const std::vector<double>& costs,
                                      const std::vector<std::string>& keys,
                                      const ShardInfo& shard) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return costs[a] != costs[b] ? costs[a] > costs[b] : keys[a] < keys[b];
  });
  std::vector<double> load(static_cast<std::size_t>(shard.count), 0.0);
  std::vector<std::size_t> mine;
  for (const auto i : order) {
    const auto part =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[part] += costs[i];
    if (static_cast<int>(part) + 1 == shard.index) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

namespace {

// The shards of N that no part is, in "K/N" form; throws on a set that cannot be one matrix's
// (a CI merge job must not go green because a failing shard's artifact was lost).
std::vector<std::string> missing_shards(const std::vector<Report>& parts,
                                        const std::vector<std::string>& origins,
                                        bool allow_missing) {
  std::map<int, std::size_t> given;  // shard index -> part
  const auto count = parts.front().shard.count;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& shard = parts[i].shard;
    if (shard.count != count)
      throw UsageError(fmt::format(
          "merge: {} is {}, {} is {}: merge the reports of one --shard set", origins[i],
          shard.count ? fmt::format("shard {}/{}", shard.index, shard.count) : "not a shard",
          origins[0],
          count ? fmt::format("shard {}/{}", parts[0].shard.index, count) : "not a shard"));
    if (count == 0) continue;
    if (const auto [at, fresh] = given.emplace(shard.index, i); !fresh)
      throw UsageError(fmt::format("merge: shard {}/{} is given twice ({} and {})", shard.index,
                                   count, origins[at->second], origins[i]));
  }
  std::vector<std::string> missing;
  for (int k = 1; k <= count; ++k)
    if (!given.contains(k)) missing.push_back(fmt::format("{}/{}", k, count));
  if (!missing.empty() && !allow_missing)
    throw UsageError(fmt::format(
        "merge: shard {} missing (the reports given are {} of {}): merge every shard's report, or "
        "pass --allow-missing-shards to merge these with the missing shards' cells unchecked "
        "(exit 1 unless --fail-on none)",
        util::join(missing, ", "), given.size(), count));
  return missing;
}

}  // namespace

Report merge_reports(const std::vector<Report>& parts, const std::vector<std::string>& origins,
                     bool allow_missing_shards) {
  if (parts.empty()) throw UsageError("merge: no reports given");
  const auto& first = parts.front();
  Report merged;
  merged.tool_version = first.tool_version;
  merged.environment = first.environment;
  merged.manifest = first.manifest;
  merged.manifest_digest = first.manifest_digest;
  merged.merged_from = origins;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  std::map<std::string, const CellResult*> cell_at;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i];
    if (part.tool_version != first.tool_version)
      throw UsageError(fmt::format("merge: {} was written by triton-portcheck {}, {} by {}",
                                   origins[i], part.tool_version, origins[0], first.tool_version));
    if (part.manifest_digest != first.manifest_digest)
      throw UsageError(fmt::format("merge: {} and {} check different manifests or targets",
                                   origins[i], origins[0]));
  }
  merged.missing_shards = missing_shards(parts, origins, allow_missing_shards);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i];
    for (const auto& t : part.targets)
      if (std::find(merged.targets.begin(), merged.targets.end(), t) == merged.targets.end())
        merged.targets.push_back(t);
    for (const auto& r : part.rows)
      if (std::find(merged.rows.begin(), merged.rows.end(), r) == merged.rows.end())
        merged.rows.push_back(r);
    for (const auto& cell : part.cells)
      if (!seen.insert({cell.kernel, cell.target, cell.triton}).second)
        throw UsageError(
            fmt::format("merge: {} on {} appears in more than one report ({} among them)",
                        cell.kernel, cell.target, origins[i]));
    merged.interrupted = merged.interrupted || part.interrupted;
    merged.wall_s = std::max(merged.wall_s, part.wall_s);
  }
  // Row-major, like an unsharded run.
  for (const auto& row : merged.rows)
    for (const auto& target : merged.targets)
      for (const auto& part : parts)
        for (const auto& cell : part.cells)
          if (cell.kernel == row && cell.target == target) merged.cells.push_back(cell);
  merged.environment["options"]["shard"] = nullptr;
  return merged;
}

}  // namespace portcheck
