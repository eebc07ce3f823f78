#include "src/core/tool_files.hpp"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "src/core/errors.hpp"

namespace portcheck {

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

std::filesystem::path checkout_root() {
  const auto exe = executable_dir();
  if (exe.empty()) return {};
  auto root = exe.parent_path();
  std::error_code ec;
  for (const char* mark : {"Makefile", "CMakeLists.txt", "python/portcheck_worker/__main__.py"})
    if (!std::filesystem::exists(root / mark, ec)) return {};
  return root;
}

ShareDirs ShareDirs::locate() {
  // Relative to the binary, never a path compiled in: <prefix>/bin/triton-portcheck finds
  // <prefix>/share/triton-portcheck (pip, cmake --install), and <checkout>/build/triton-portcheck
  // finds the checkout itself.
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("TRITON_PORTCHECK_SHARE"); env && *env)
    candidates.emplace_back(env);
  if (const auto exe = executable_dir(); !exe.empty()) {
    candidates.push_back(exe / ".." / "share" / "triton-portcheck");
    candidates.push_back(exe / "..");
  }
  for (const auto& root : candidates) {
    if (std::filesystem::exists(root / "python" / "portcheck_worker" / "__main__.py"))
      return ShareDirs{std::filesystem::canonical(root / "python"),
                       std::filesystem::canonical(root) / "demo",
                       std::filesystem::canonical(root) / "data"};
  }
  throw EnvironmentError(fmt::format(
      "cannot find the tool's files (python/portcheck_worker, data, demo) next to {}: reinstall "
      "triton-portcheck, or set TRITON_PORTCHECK_SHARE to the folder that holds them",
      executable_dir().string()));
}

}  // namespace portcheck
