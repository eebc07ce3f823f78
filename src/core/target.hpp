#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace portcheck {

// A compile target: "cuda:90" (compute capability as an integer) or "hip:gfx942".
struct Target {
  std::string backend;  // "cuda" or "hip"
  std::string arch;     // "90" or "gfx942"
  int warp_size = 32;

  [[nodiscard]] std::string name() const { return backend + ":" + arch; }
  bool operator==(const Target&) const = default;
};

// Parses "cuda:<capability>" or "hip:gfx<arch>"; nullopt with `error` set when malformed.
std::optional<Target> parse_target(std::string_view text, std::string* error = nullptr);

// Warp size 64 on the CDNA gfx9 family, 32 elsewhere.
int warp_size_for(std::string_view backend, std::string_view arch);

const std::vector<std::string>& default_target_names();

}  // namespace portcheck
