#pragma once
// The result cache a check reads and writes: the local one (run/result_cache.hpp) first, then,
// when a run names one, a shared remote store (run/remote_store.hpp) that other machines fill.
//
// The remote can only ever cost speed, never a result or the run: an entry it serves passes the
// local cache's own checks (checksum, key, schema, types) or is ignored, and never copied; the
// first request that fails (down, too slow, refused, garbage) is reported once on stderr and
// ends the remote's part in this run, so a dead server costs at most one timeout.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/remote_url.hpp"
#include "src/run/remote_store.hpp"
#include "src/run/result_cache.hpp"

namespace portcheck {

// What a run did with its caches: `cache stats` shows the last runs' figures.
struct CacheCounters {
  std::size_t local_hits = 0;
  std::size_t remote_hits = 0;  // fetched from the remote, then served
  std::size_t misses = 0;       // compiled (or not cacheable)
  std::size_t stored = 0;       // written to the local cache
  std::size_t remote_stored = 0;
  std::size_t remote_errors = 0;    // requests that failed (at most a few: the first ends it)
  std::size_t remote_skipped = 0;   // requests not made because the remote had failed
  std::size_t remote_rejected = 0;  // remote entries that failed the checks
  std::uint64_t bytes_fetched = 0;
  std::uint64_t bytes_stored = 0;
  double remote_read_seconds = 0;   // waiting on the remote's answers to reads
  double remote_write_seconds = 0;  // and to writes
  double local_read_seconds = 0;    // in the local cache's lookups
  double local_write_seconds = 0;   // and writes (fetched entries checked and copied included)
  [[nodiscard]] nlohmann::json to_json() const;
};

struct RemoteCacheSettings {
  RemoteUrl url;
  bool readonly = false;  // pull requests: read what trusted runs stored, write nothing there
  std::chrono::milliseconds timeout{2000};
};

class TieredCache {
 public:
  // `remote` null: the local cache alone.
  TieredCache(ResultCache& local, std::unique_ptr<RemoteStore> remote,
              std::optional<RemoteCacheSettings> settings);

  // Asks the remote, in one round trip, for the keys the local cache lacks; what passes the checks
  // is copied into the local cache, where load() finds it.
  void prefetch(const std::vector<std::string>& keys);
  // The entry for `key` when one was reached under limits this run's would not have cut short
  // (fits_limits); counts a hit or a miss.
  std::optional<nlohmann::json> load(const std::string& key, double timeout_s,
                                     std::uint64_t max_rss);
  // Writes to the local cache and, unless read-only, queues it for the remote: written together
  // (kWritesPerRoundTrip, or what waited a second), so a distant store costs one round trip per
  // group of writes while cells wait to start, not one per cell.
  void store(const std::string& key, const nlohmann::json& entry);
  // Sends what is queued. Called when a pass over the cells ends, and before each prefetch.
  void flush();
  static constexpr std::size_t kWritesPerRoundTrip = 32;

  [[nodiscard]] ResultCache& local() { return local_; }
  [[nodiscard]] const CacheCounters& counters() const { return counters_; }
  [[nodiscard]] const std::optional<RemoteCacheSettings>& remote_settings() const {
    return settings_;
  }

 private:
  [[nodiscard]] bool remote_usable() const { return remote_ != nullptr && !remote_failed_; }
  void remote_failed(const std::string& what, const std::exception& error, bool reads_too);
  void note_rejected(const std::string& key, const std::string& problem);

  ResultCache& local_;
  std::unique_ptr<RemoteStore> remote_;
  std::optional<RemoteCacheSettings> settings_;
  bool remote_failed_ = false;  // no more requests in this run
  bool writes_refused_ = false;
  std::set<std::string> fetched_;  // keys copied from the remote this run
  std::vector<std::pair<std::string, std::string>> pending_;  // (key, sealed entry) to write
  std::chrono::steady_clock::time_point pending_since_;
  bool reads_reported_ = false;  // each kind of failure is reported once
  bool writes_reported_ = false;
  CacheCounters counters_;
};

}  // namespace portcheck
