#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace portcheck {

// $TRITON_PORTCHECK_HOME, else $XDG_CACHE_HOME/triton-portcheck, else ~/.cache/triton-portcheck.
std::filesystem::path portcheck_home();

// Content-addressed results: one JSON file per cell key under <home>/results/<k[0:2]>/<k>.json.
// Writes go to a temporary file and are renamed, so concurrent runs sharing the cache only ever
// see whole entries; a hit refreshes the file's mtime, and eviction removes the least recently
// used entries once the total size passes the bound.
class ResultCache {
 public:
  ResultCache(std::filesystem::path root, std::uint64_t max_bytes);

  // An entry is served only when its checksum (over all its content) holds, it is of this
  // version's schema and its fields have the types the tool reads. Anything else is a miss; the
  // first damaged entry is reported on stderr, once.
  std::optional<nlohmann::json> load(const std::string& key);
  // Seals `entry` (schema, checksum), writes it, and returns the text written.
  std::string store(const std::string& key, const nlohmann::json& entry);
  // Writes an entry already sealed (one fetched from a shared cache, checked by check_entry).
  void store_sealed(const std::string& key, const std::string& text);
  [[nodiscard]] bool contains(const std::string& key) const;  // present, whatever its state
  // The entry `text` holds for `key` when every check of load() passes; else nullopt, with
  // `problem` saying what is wrong (empty for an entry of another version: a plain miss).
  static std::optional<nlohmann::json> check_entry(const std::string& text, const std::string& key,
                                                   std::string* problem);
  static std::string seal(const nlohmann::json& entry);
  [[nodiscard]] std::size_t damaged() const { return damaged_; }  // entries refused so far
  // Removes least-recently-used entries until the cache fits in 90% of its bound.
  void evict_to_fit();

  struct Stats {
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
  };
  [[nodiscard]] Stats stats() const;
  std::size_t clean();  // removes every entry; returns how many
  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  [[nodiscard]] std::uint64_t max_bytes() const { return max_bytes_; }

 private:
  [[nodiscard]] std::filesystem::path path_for(const std::string& key) const;
  void note_damage(const std::filesystem::path& path, const std::string& problem);
  std::filesystem::path root_;
  std::uint64_t max_bytes_;
  std::size_t damaged_ = 0;
};

// A cached verdict was reached under the limits of the run that stored it. It stands only if
// this run's limits (0: none) would have let that compile finish too: it took less time than
// `timeout_s` and, as sampled, no more memory than `max_rss`. Otherwise the cell is compiled again.
bool fits_limits(const nlohmann::json& entry, double timeout_s, std::uint64_t max_rss);

// Past wall times per (row, target, Triton version), so the slowest cells start first.
class CellTimings {
 public:
  explicit CellTimings(std::filesystem::path file);
  [[nodiscard]] std::optional<double> get(const std::string& key) const;
  // The mean of the known times whose key ends in "|" + `suffix` ("cuda:90|3.9.0": every row
  // on that target and release), for a cell with no history of its own.
  [[nodiscard]] std::optional<double> mean_of_suffix(const std::string& suffix) const;
  void set(const std::string& key, double seconds) { updates_[key] = seconds; }
  void save();  // merges with what other runs wrote meanwhile

 private:
  std::filesystem::path file_;
  std::map<std::string, double> known_;
  std::map<std::string, std::pair<double, std::size_t>> suffix_sums_;  // sum, count
  std::map<std::string, double> updates_;
};

inline constexpr std::uint64_t kDefaultCacheBytes = 512ULL << 20;
// No entry we write comes near this (a few KiB; the largest seen, with a long compiler log, under
// 1 MiB); anything larger is not ours and is not read.
inline constexpr std::uint64_t kMaxEntryBytes = 64ULL << 20;

}  // namespace portcheck
