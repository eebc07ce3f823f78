#pragma once
// Whether this machine shows its processes a GPU: live capture compiles and launches the user's
// kernels on one, and without it the command runs to the end for nothing.
#include <filesystem>
#include <vector>

namespace portcheck {

// The device nodes a GPU driver makes under `dev` (/dev): NVIDIA's (/dev/nvidia0, ...), AMD's
// ROCm (/dev/kfd), WSL's (/dev/dxg). Empty: no GPU is visible here (a container given none, a
// laptop without one).
std::vector<std::filesystem::path> gpu_device_nodes(const std::filesystem::path& dev = "/dev");

}  // namespace portcheck
