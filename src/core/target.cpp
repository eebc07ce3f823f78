#include "src/core/target.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace portcheck {

int warp_size_for(std::string_view backend, std::string_view arch) {
  // gfx9xx (CDNA: gfx908, gfx90a, gfx942, gfx950) executes 64-wide wavefronts; RDNA (gfx10+) and
  // later run wave32, which is what Triton's HIP backend compiles for.
  if (backend == "hip" && arch.size() == 6 && arch.starts_with("gfx9")) return 64;
  return 32;
}

std::optional<Target> parse_target(std::string_view text, std::string* error) {
  const auto fail = [&](std::string message) -> std::optional<Target> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return fail(
        fmt::format("'{}' is not a target: expected cuda:<capability> (cuda:90) or "
                    "hip:<gfx arch> (hip:gfx942)",
                    text));
  const auto backend = text.substr(0, colon);
  const auto arch = text.substr(colon + 1);
  if (backend == "cuda") {
    if (arch.empty() || arch.size() > 3 || !std::all_of(arch.begin(), arch.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        }))
      return fail(
          fmt::format("'{}': a CUDA target is a compute capability without the dot, such as "
                      "cuda:80 or cuda:90",
                      text));
    return Target{"cuda", std::string(arch), 32};
  }
  if (backend == "hip") {
    const bool ok = arch.size() > 3 && arch.starts_with("gfx") &&
                    std::all_of(arch.begin() + 3, arch.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) != 0;
                    });
    if (!ok)
      return fail(
          fmt::format("'{}': a HIP target is an AMD gfx architecture, such as hip:gfx942", text));
    return Target{"hip", std::string(arch), warp_size_for("hip", arch)};
  }
  return fail(fmt::format("'{}': unknown backend '{}' (expected cuda or hip)", text, backend));
}

const std::vector<std::string>& default_target_names() {
  static const std::vector<std::string> names{"cuda:75",    "cuda:80",     "cuda:90",
                                              "cuda:100",   "cuda:120",    "hip:gfx942",
                                              "hip:gfx950", "hip:gfx1100", "hip:gfx1250"};
  return names;
}

}  // namespace portcheck
