#pragma once
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/errors.hpp"

namespace portcheck {

// One of the tool's own data files (data/*.toml), `what` naming it in errors: absent means empty
// (nullopt), malformed is an EnvironmentError, since the installation is broken.
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
