#include "src/run/tiered_cache.hpp"

#include <cstdio>

#include "util/remote_error.hpp"

namespace portcheck {
namespace {

// Adds the seconds `work` takes to `total`, however it ends.
class Stopwatch {
 public:
  explicit Stopwatch(double& total) : total_(total), started_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() {
    total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace

nlohmann::json CacheCounters::to_json() const {
  return {{"local_hits", local_hits},
          {"remote_hits", remote_hits},
          {"misses", misses},
          {"stored", stored},
          {"remote_stored", remote_stored},
          {"remote_errors", remote_errors},
          {"remote_skipped", remote_skipped},
          {"remote_rejected", remote_rejected},
          {"bytes_fetched", bytes_fetched},
          {"bytes_stored", bytes_stored},
          {"remote_read_seconds", remote_read_seconds},
          {"remote_write_seconds", remote_write_seconds},
          {"local_read_seconds", local_read_seconds},
          {"local_write_seconds", local_write_seconds}};
}

TieredCache::TieredCache(ResultCache& local, std::unique_ptr<RemoteStore> remote,
                         std::optional<RemoteCacheSettings> settings)
    : local_(local), remote_(std::move(remote)), settings_(std::move(settings)) {}

void TieredCache::prefetch(const std::vector<std::string>& keys) {
  if (remote_ == nullptr) return;
  flush();  // a pass before this one may have left writes queued
  std::vector<std::string> missing;
  {
    const Stopwatch watch(counters_.local_read_seconds);
    const std::set<std::string> unique(keys.begin(), keys.end());
    for (const auto& key : unique)
      if (!key.empty() && !local_.contains(key)) missing.push_back(key);
  }
  if (missing.empty()) return;
  if (!remote_usable()) {
    counters_.remote_skipped += missing.size();
    return;
  }
  std::vector<std::optional<std::string>> values;
  try {
    const Stopwatch watch(counters_.remote_read_seconds);
    values = remote_->get_many(missing);
  } catch (const std::exception& error) {
    remote_failed("reading", error, /*reads_too=*/true);
    return;
  }
  // Checking and copying what came back is part of what a remote hit costs.
  const Stopwatch watch(counters_.local_write_seconds);
  for (std::size_t i = 0; i < missing.size() && i < values.size(); ++i) {
    if (!values[i]) continue;
    std::string problem;
    if (!ResultCache::check_entry(*values[i], missing[i], &problem)) {
      if (!problem.empty()) note_rejected(missing[i], problem);
      continue;  // damaged, tampered with, or another version's: never copied, never served
    }
    local_.store_sealed(missing[i], *values[i]);
    fetched_.insert(missing[i]);
    counters_.bytes_fetched += values[i]->size();
  }
}

std::optional<nlohmann::json> TieredCache::load(const std::string& key, double timeout_s,
                                                std::uint64_t max_rss) {
  std::optional<nlohmann::json> entry;
  {
    const Stopwatch watch(counters_.local_read_seconds);
    entry = local_.load(key);
  }
  if (!entry || !fits_limits(*entry, timeout_s, max_rss)) {
    ++counters_.misses;
    return std::nullopt;
  }
  ++(fetched_.count(key) != 0 ? counters_.remote_hits : counters_.local_hits);
  return entry;
}

void TieredCache::store(const std::string& key, const nlohmann::json& entry) {
  std::string text;
  {
    const Stopwatch watch(counters_.local_write_seconds);
    text = local_.store(key, entry);
  }
  ++counters_.stored;
  if (remote_ == nullptr || (settings_ && settings_->readonly)) return;
  if (!remote_usable() || writes_refused_) {
    ++counters_.remote_skipped;
    return;
  }
  if (pending_.empty()) pending_since_ = std::chrono::steady_clock::now();
  pending_.emplace_back(key, std::move(text));
  const auto waited = std::chrono::steady_clock::now() - pending_since_;
  if (pending_.size() >= kWritesPerRoundTrip || waited >= std::chrono::seconds(1)) flush();
}

void TieredCache::flush() {
  if (pending_.empty()) return;
  auto writes = std::move(pending_);
  pending_.clear();
  if (!remote_usable() || writes_refused_) {
    counters_.remote_skipped += writes.size();
    return;
  }
  std::size_t acknowledged = 0;
  try {
    const Stopwatch watch(counters_.remote_write_seconds);
    remote_->put_many(writes, acknowledged);
    for (const auto& item : writes) counters_.bytes_stored += item.second.size();
  } catch (const util::RejectedError& error) {
    remote_failed("writing", error, /*reads_too=*/false);
  } catch (const std::exception& error) {
    remote_failed("writing", error, /*reads_too=*/true);
  }
  // However the write ended: what the store confirmed before it failed is stored.
  counters_.remote_stored += acknowledged;
}

void TieredCache::remote_failed(const std::string& what, const std::exception& error,
                                bool reads_too) {
  ++counters_.remote_errors;
  // A refused write stops the writes; anything else stops the remote altogether. Each is said
  // once: a store that first refuses writes and later stops answering is told both times.
  auto& reported = reads_too ? reads_reported_ : writes_reported_;
  (reads_too ? remote_failed_ : writes_refused_) = true;
  if (reported) return;
  reported = true;
  if (reads_too) writes_reported_ = true;  // nothing more to say about writes
  const auto where = settings_ ? settings_->url.shown() : std::string("the remote cache");
  const auto why = settings_ ? settings_->url.masked(error.what()) : std::string(error.what());
  std::fprintf(stderr, "triton-portcheck: remote cache %s: %s failed (%s); %s\n", where.c_str(),
               what.c_str(), why.c_str(),
               reads_too ? "this run goes on with the local cache only"
                         : "this run stores its results in the local cache only");
}

void TieredCache::note_rejected(const std::string& key, const std::string& problem) {
  if (counters_.remote_rejected++ != 0) return;  // once per run, as for local damage
  const auto where = settings_ ? settings_->url.shown() : std::string("the remote cache");
  std::fprintf(stderr,
               "triton-portcheck: ignoring an entry of remote cache %s (key %s: %s); it is "
               "compiled again%s\n",
               where.c_str(), key.c_str(), problem.c_str(),
               settings_ && settings_->readonly ? "" : " and replaced there");
}

}  // namespace portcheck
