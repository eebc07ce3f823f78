#include "src/capture/gpu_devices.hpp"

#include <algorithm>
#include <string>

namespace portcheck {
namespace {

// nvidia0, nvidia1, ...: one per GPU (nvidiactl and nvidia-uvm exist without any).
bool is_nvidia_gpu(const std::string& name) {
  return name.size() > 6 && name.starts_with("nvidia") &&
         std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::filesystem::path> gpu_device_nodes(const std::filesystem::path& dev) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dev, ec))
    if (const auto name = entry.path().filename().string();
        is_nvidia_gpu(name) || name == "kfd" || name == "dxg")
      found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace portcheck
