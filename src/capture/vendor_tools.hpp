#pragma once
// The vendors' management tools a persona run finds first on PATH (`capture --as`).

#include <filesystem>
#include <string>

namespace portcheck {

// Writes `nvidia-smi`, `rocm-smi` and `amd-smi` into `folder`, each running the worker's
// vendor_tools.py with `python`: the persona's vendor's tools answer as its device, the other
// vendor's fail as they do without that vendor's driver (docs/capture.md, "Device personas").
void write_vendor_tools(const std::filesystem::path& folder, const std::filesystem::path& worker,
                        const std::string& python);

// `PATH=` with `folder` first, before the PATH this process was given.
std::string path_with_vendor_tools(const std::filesystem::path& folder);

}  // namespace portcheck
