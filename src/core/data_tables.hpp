#pragma once
// The tool's own data files (data/*.toml): absent means empty, malformed is an environment error.
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/errors.hpp"

namespace portcheck {

inline std::optional<toml::table> load_data_table(const std::filesystem::path& file,
                                                  std::string_view what) {
  if (!std::filesystem::exists(file)) return std::nullopt;
  try {
    return toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw EnvironmentError(fmt::format("{}:{}: invalid TOML in the {}: {}", file.string(),
                                       e.source().begin.line, what, e.description()));
  }
}

}  // namespace portcheck
