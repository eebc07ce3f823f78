#include "src/capture/vendor_tools.hpp"

#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {

namespace {

// Host code finds a vendor by running these (flag_gems: `nvidia-smi`, `rocm-smi`; torch's docs
// and ROCm's own scripts: `amd-smi`); the script knows each one's queries.
constexpr std::array<std::string_view, 3> kTools = {"nvidia-smi", "rocm-smi", "amd-smi"};

}  // namespace

void write_vendor_tools(const std::filesystem::path& folder, const std::filesystem::path& worker,
                        const std::string& python) {
  std::filesystem::create_directories(folder);
  const auto script = worker / "portcheck_worker" / "capture" / "vendor_tools.py";
  for (const auto tool : kTools) {
    // -I: the capture's PYTHONPATH (its sitecustomize hook) and the user's site are not wanted
    // in a tool that only prints.
    const auto text = fmt::format(
        "#!/bin/sh\n"
        "# Written by triton-portcheck capture: {} as the run's device persona answers it.\n"
        "exec {} -I {} {} \"$@\"\n",
        tool, util::shell_quoted(python), util::shell_quoted(script.string()), tool);
    const auto path = folder / std::string(tool);
    util::atomic_write_file(path, text);
    ::chmod(path.c_str(), 0755);
  }
}

std::string path_with_vendor_tools(const std::filesystem::path& folder) {
  const char* path = std::getenv("PATH");
  return "PATH=" + folder.string() +
         (path != nullptr && *path != '\0' ? ":" + std::string(path) : "");
}

}  // namespace portcheck
