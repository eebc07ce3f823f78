#include "src/check/worker_targets.hpp"

#include <set>

namespace portcheck {

WarpSizes probed_warp_sizes(const ProbeAnswer& probe) {
  WarpSizes sizes;
  for (const auto& t : probe.targets)
    if (t.warp_size) sizes[t.name] = *t.warp_size;
  return sizes;
}

nlohmann::json targets_json(const std::vector<std::string>& columns, const WarpSizes& sizes) {
  auto out = nlohmann::json::array();
  for (const auto& name : columns) {
    auto target = checked_target(name);
    if (const auto it = sizes.find(name); it != sizes.end()) target.warp_size = it->second;
    out.push_back(nlohmann::json(target));
  }
  return out;
}

nlohmann::json warm_up_targets(const std::vector<std::string>& columns) {
  auto out = nlohmann::json::array();
  std::set<Backend> backends;
  for (const auto& name : columns) {
    const auto target = checked_target(name);
    if (backends.insert(target.backend).second) out.push_back(nlohmann::json(target));
  }
  return out;
}

void adopt_warp_sizes(std::vector<PlannedCell>& cells, const WarpSizes& sizes) {
  for (auto& cell : cells) {
    const auto it = sizes.find(cell.target.name());
    if (it == sizes.end()) continue;
    cell.target.warp_size = it->second;
    cell.request["target"] = nlohmann::json(cell.target);
  }
}

}  // namespace portcheck
