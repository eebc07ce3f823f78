#pragma once
#include <filesystem>
#include <map>
#include <string>

namespace portcheck {

// Failures reproduced here, keyed by fingerprint, with why they happen and where upstream
// discusses them (data/known-failures.toml).
struct KnownFailure {
  std::string why;
  std::string link;
};

class KnownFailures {
 public:
  static KnownFailures load(const std::filesystem::path& file);
  [[nodiscard]] const KnownFailure* find(const std::string& fingerprint) const;
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, KnownFailure> entries_;
};

}  // namespace portcheck
