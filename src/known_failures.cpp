#include "src/known_failures.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/errors.hpp"

namespace portcheck {

KnownFailures KnownFailures::load(const std::filesystem::path& file) {
  KnownFailures out;
  if (!std::filesystem::exists(file)) return out;
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw EnvironmentError(fmt::format("{}:{}: invalid TOML in the known-failure table: {}",
                                       file.string(), e.source().begin.line, e.description()));
  }
  const auto* failures = root.get_as<toml::array>("failure");
  if (failures == nullptr) return out;
  for (const auto& node : *failures) {
    const auto* table = node.as_table();
    if (table == nullptr) continue;
    const auto fp = (*table)["fingerprint"].value<std::string>();
    if (!fp) continue;
    out.entries_[*fp] = KnownFailure{(*table)["why"].value_or(std::string()),
                                     (*table)["link"].value_or(std::string())};
  }
  return out;
}

const KnownFailure* KnownFailures::find(const std::string& fingerprint) const {
  const auto it = entries_.find(fingerprint);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace portcheck
