#include "src/check/worker_targets.hpp"

#include <set>

namespace portcheck {

WarpSizes probed_warp_sizes(const nlohmann::json& probe) {
  WarpSizes sizes;
  const auto it = probe.find("targets");
  if (it == probe.end() || !it->is_array()) return sizes;
  for (const auto& t : *it)
    if (t.contains("warp_size") && t.contains("name"))
      sizes[t.at("name").get<std::string>()] = t.at("warp_size").get<int>();
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
