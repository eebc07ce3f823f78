#include "src/check/known_failures.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/data_tables.hpp"
#include "src/core/errors.hpp"

namespace portcheck {

KnownFailures KnownFailures::load(const std::filesystem::path& file) {
  KnownFailures out;
  const auto root = load_data_table(file, "known-failure table");
  if (!root) return out;
  const auto* failures = root->get_as<toml::array>("failure");
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
