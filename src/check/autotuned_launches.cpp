#include "src/check/autotuned_launches.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>

namespace portcheck {
namespace {

// One launch on one target and Triton: (kernel, launch name, target, triton).
using LaunchKey = std::tuple<std::string, std::string, std::string, std::string>;

// How a config fares in its launch.
enum class ConfigFate { remains, skippable, raises };

ConfigFate fate_of(const CellResult& cell) {
  if (!cell.failed_outcome()) return ConfigFate::remains;  // ok, xpass, or not compiled
  return cell.autotuner_skips ? ConfigFate::skippable : ConfigFate::raises;
}

struct LaunchCells {
  std::vector<std::size_t> cells;  // indices into the cells judged
  int remaining = 0;
  int raising = 0;
  // The autotuner goes on past a skipped config when another config runs or raises.
  [[nodiscard]] bool keeps_another() const { return remaining > 0 || raising > 0; }
};

std::map<LaunchKey, LaunchCells> launches_of(const Manifest& manifest,
                                             const std::vector<CellResult>& cells) {
  std::unordered_map<std::string, const KernelRow*> rows;
  for (const auto& row : manifest.rows) rows.emplace(row.display_name(), &row);
  std::map<LaunchKey, LaunchCells> launches;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto row = rows.find(cells[i].kernel);
    if (row == rows.end()) continue;
    const auto fate = fate_of(cells[i]);
    for (const auto& name : row->second->autotune) {
      auto& launch = launches[{row->second->kernel, name, cells[i].target, cells[i].triton}];
      launch.cells.push_back(i);
      launch.remaining += fate == ConfigFate::remains ? 1 : 0;
      launch.raising += fate == ConfigFate::raises ? 1 : 0;
    }
  }
  return launches;
}

}  // namespace

void judge_autotuned_launches(const Manifest& manifest, std::vector<CellResult>& cells) {
  const auto launches = launches_of(manifest, cells);
  // A config is skipped only where every launch that benchmarks it keeps another config.
  std::vector<bool> skipped(cells.size(), true);
  for (const auto& [key, launch] : launches) {
    const AutotunedLaunch seen{std::get<1>(key), static_cast<int>(launch.cells.size()),
                               launch.remaining};
    for (const auto i : launch.cells) {
      auto& cell = cells[i];
      if (!cell.autotuned || seen.remaining < cell.autotuned->remaining) cell.autotuned = seen;
      skipped[i] = skipped[i] && launch.keeps_another();
    }
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto& cell = cells[i];
    if (!cell.autotuned || !skipped[i] || fate_of(cell) != ConfigFate::skippable) continue;
    cell.status = Status::skipped;
    cell.is_new = false;
  }
}

std::vector<std::size_t> autotune_companions(const Manifest& manifest) {
  // Union-find over the rows: two rows one launch benchmarks are one group, whose root is always
  // its first row (the smaller root joins the larger's group), so every runner derives the same.
  std::vector<std::size_t> parent(manifest.rows.size());
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::pair<std::string, std::string>, std::size_t> first_row;  // (kernel, launch)
  for (std::size_t i = 0; i < manifest.rows.size(); ++i)
    for (const auto& name : manifest.rows[i].autotune) {
      const auto [it, added] = first_row.emplace(std::pair(manifest.rows[i].kernel, name), i);
      const auto a = root(i), b = root(it->second);
      if (!added) parent[std::max(a, b)] = std::min(a, b);
    }
  std::vector<std::size_t> out(parent.size());
  for (std::size_t i = 0; i < parent.size(); ++i) out[i] = root(i);
  return out;
}

}  // namespace portcheck
