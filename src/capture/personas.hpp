#pragma once
// The devices `capture --as` makes host code believe it runs on (data/device-personas.toml).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/target.hpp"

namespace portcheck {

struct Persona {
  Target target;
  // What the capture hook answers for this device: the table's torch property fields (defaults
  // merged in) plus "target", "backend", "arch", "warp_size" and "capability" ([major, minor]).
  nlohmann::json device;
};

// The personas named by `--as` (comma-separated target names), in the order given. Throws
// UsageError naming the flag for a malformed or repeated name, or a target the table has no
// device for (it lists those it has); EnvironmentError for a device the table describes without
// a field the capture hook answers with (a damaged installation).
std::vector<Persona> load_personas(const std::filesystem::path& table,
                                   const std::vector<std::string>& names);

}  // namespace portcheck
