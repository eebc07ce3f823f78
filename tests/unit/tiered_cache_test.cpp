// The shared cache's rules, on a store that fails exactly as told: a remote can cost speed,
// never a result; its failures end its part in the run after one request; what it serves is
// checked like the local cache's own entries.
#include "src/run/tiered_cache.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "util/fs.hpp"
#include "util/remote_error.hpp"

namespace portcheck {
namespace {

const std::string kKey(64, 'b');
const std::string kOther(64, 'c');

nlohmann::json entry(const std::string& key, double wall_s = 0.5) {
  return {{"key", key},
          {"origin", "/src"},
          {"result",
           {{"status", "ok"},
            {"compile_s", 0.4},
            {"stages", nlohmann::json::object()},
            {"metadata", nlohmann::json::object()},
            {"sizes", nlohmann::json::object()},
            {"source", nullptr},
            {"resources", nlohmann::json::object()}}},
          {"stderr", ""},
          {"last_stage", "cubin"},
          {"wall_s", wall_s},
          {"peak_rss_bytes", 1 << 20}};
}

// A shared map standing for the server; `fail_with` makes every request throw that, and the
// requests made are counted.
struct FakeServer {
  std::map<std::string, std::string> values;
  enum class Fault { none, transport, rejected } fault = Fault::none;
  int gets = 0;
  int puts = 0;
  // A write fails (connection reset) after confirming this many of its items.
  std::size_t fail_after = std::numeric_limits<std::size_t>::max();
};

class FakeStore : public RemoteStore {
 public:
  explicit FakeStore(FakeServer& server) : server_(server) {}
  std::vector<std::optional<std::string>> get_many(const std::vector<std::string>& keys) override {
    ++server_.gets;
    fail_if_told();
    std::vector<std::optional<std::string>> out;
    for (const auto& k : keys) {
      const auto it = server_.values.find(k);
      out.push_back(it == server_.values.end() ? std::nullopt : std::optional(it->second));
    }
    return out;
  }
  void put_many(const std::vector<std::pair<std::string, std::string>>& items,
                std::size_t& acknowledged) override {
    ++server_.puts;
    fail_if_told();
    for (const auto& [key, value] : items) {
      if (acknowledged == server_.fail_after) throw util::TransportError("connection reset");
      server_.values[key] = value;
      ++acknowledged;
    }
  }
  void ping() override { fail_if_told(); }

 private:
  void fail_if_told() const {
    if (server_.fault == FakeServer::Fault::transport) throw util::TransportError("timed out");
    if (server_.fault == FakeServer::Fault::rejected) throw util::RejectedError("OOM");
  }
  FakeServer& server_;
};

// One machine: its own local cache, the shared server.
struct Machine {
  Machine(FakeServer& server, bool readonly = false)
      : cache(local, std::make_unique<FakeStore>(server), settings(readonly)) {}
  static RemoteCacheSettings settings(bool readonly) {
    RemoteCacheSettings s;
    std::string problem;
    s.url = *parse_remote_url("redis://fake", &problem);
    s.readonly = readonly;
    return s;
  }
  util::TempDir home{"portcheck-tiered-test"};
  ResultCache local{home.path(), 1 << 20};
  TieredCache cache;
};

TEST(TieredCache, WhatOneMachineStoresAnotherServesWithoutCompiling) {
  FakeServer server;
  Machine first(server);
  first.cache.prefetch({kKey});
  EXPECT_FALSE(first.cache.load(kKey, 0, 0));
  first.cache.store(kKey, entry(kKey));
  first.cache.flush();
  EXPECT_EQ(first.cache.counters().remote_stored, 1U);

  Machine second(server);
  second.cache.prefetch({kKey, kOther});
  const auto served = second.cache.load(kKey, 0, 0);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->at("result"), entry(kKey).at("result"));
  EXPECT_FALSE(second.cache.load(kOther, 0, 0));
  const auto& c = second.cache.counters();
  EXPECT_EQ(c.remote_hits, 1U);
  EXPECT_EQ(c.local_hits, 0U);
  EXPECT_EQ(c.misses, 1U);
  EXPECT_EQ(server.gets, 2);  // one batch per machine, not one request per key

  // Copied into the second machine's local cache: its next run does not ask.
  Machine again_second(server);
  again_second.local.store_sealed(kKey, server.values[kKey]);
  again_second.cache.prefetch({kKey});
  EXPECT_EQ(server.gets, 2);
}

TEST(TieredCache, ATamperedRemoteEntryIsNeitherServedNorCopied) {
  FakeServer server;
  Machine writer(server);
  writer.cache.store(kKey, entry(kKey));
  writer.cache.flush();
  auto& text = server.values[kKey];
  text.replace(text.find("cubin"), 5, "CUBIN");  // content changed, checksum kept
  server.values[kOther] = "not json at all";
  server.values[std::string(64, 'd')] = ResultCache::seal(entry(kKey));  // another key's entry

  Machine reader(server);
  reader.cache.prefetch({kKey, kOther, std::string(64, 'd')});
  EXPECT_FALSE(reader.cache.load(kKey, 0, 0));
  EXPECT_FALSE(reader.local.contains(kKey));
  EXPECT_EQ(reader.cache.counters().remote_rejected, 3U);
  EXPECT_EQ(reader.cache.counters().remote_hits, 0U);
  // The recompiled result replaces it there.
  reader.cache.store(kKey, entry(kKey));
  reader.cache.flush();
  Machine later(server);
  later.cache.prefetch({kKey});
  EXPECT_TRUE(later.cache.load(kKey, 0, 0));
}

TEST(TieredCache, AServerThatStopsAnsweringIsAskedOnceAndTheRunGoesOn) {
  FakeServer server;
  server.fault = FakeServer::Fault::transport;
  Machine m(server);
  m.cache.prefetch({kKey, kOther});
  m.cache.store(kKey, entry(kKey));
  m.cache.store(kOther, entry(kOther));
  EXPECT_EQ(server.gets + server.puts, 1);
  const auto& c = m.cache.counters();
  EXPECT_EQ(c.remote_errors, 1U);
  EXPECT_EQ(c.remote_skipped, 2U);
  EXPECT_EQ(c.stored, 2U);  // the local cache has every result
  EXPECT_TRUE(m.cache.load(kKey, 0, 0));
}

TEST(TieredCache, AFullServerStopsTheWritesOnlyAndReadsGoOn) {
  FakeServer server;
  Machine writer(server);
  writer.cache.store(kKey, entry(kKey));
  writer.cache.flush();
  server.fault = FakeServer::Fault::rejected;
  Machine m(server);
  m.cache.store(kOther, entry(kOther));
  m.cache.flush();
  m.cache.store(std::string(64, 'e'), entry(std::string(64, 'e')));
  m.cache.flush();
  EXPECT_EQ(m.cache.counters().remote_errors, 1U);
  EXPECT_EQ(m.cache.counters().remote_skipped, 1U);
  server.fault = FakeServer::Fault::none;
  m.cache.prefetch({kKey});
  EXPECT_TRUE(m.cache.load(kKey, 0, 0));
  EXPECT_EQ(m.cache.counters().remote_hits, 1U);
}

TEST(TieredCache, ReadOnlyReadsAndNeverWrites) {
  FakeServer server;
  Machine trusted(server);
  trusted.cache.store(kKey, entry(kKey));
  trusted.cache.flush();
  Machine pull_request(server, /*readonly=*/true);
  pull_request.cache.prefetch({kKey});
  EXPECT_TRUE(pull_request.cache.load(kKey, 0, 0));
  pull_request.cache.store(kOther, entry(kOther));
  pull_request.cache.flush();
  EXPECT_EQ(server.values.count(kOther), 0U);
  EXPECT_EQ(server.puts, 1);
  EXPECT_TRUE(pull_request.local.contains(kOther));  // its own runs still profit
}

TEST(TieredCache, AnEntryReachedUnderLongerLimitsIsAMiss) {
  FakeServer server;
  Machine writer(server);
  writer.cache.store(kKey, entry(kKey, /*wall_s=*/30));
  writer.cache.flush();
  Machine m(server);
  m.cache.prefetch({kKey});
  EXPECT_FALSE(m.cache.load(kKey, /*timeout_s=*/10, 0));
  EXPECT_EQ(m.cache.counters().misses, 1U);
  EXPECT_TRUE(m.cache.load(kKey, 60, 0));
}

TEST(TieredCache, WritesGoInBatchesNotOneRequestPerCell) {
  FakeServer server;
  Machine m(server);
  const auto cells = TieredCache::kWritesPerRoundTrip + 8;
  for (std::size_t i = 0; i < cells; ++i) {
    const auto key = std::string(60, 'f') + std::to_string(1000 + i);
    m.cache.store(key, entry(key));
  }
  EXPECT_EQ(server.puts, 1);  // the first full batch went at once
  m.cache.flush();
  EXPECT_EQ(server.puts, 2);
  EXPECT_EQ(server.values.size(), cells);
  EXPECT_EQ(m.cache.counters().remote_stored, cells);
}

// A server that goes away in the middle of a write kept what it confirmed: the run says so
// rather than that nothing was stored.
TEST(TieredCache, AWriteCutShortCountsWhatTheStoreConfirmed) {
  FakeServer server;
  server.fail_after = 5;
  Machine m(server);
  for (int i = 0; i < 9; ++i) {
    const auto key = std::string(60, 'g') + std::to_string(1000 + i);
    m.cache.store(key, entry(key));
  }
  m.cache.flush();
  const auto& c = m.cache.counters();
  EXPECT_EQ(c.remote_errors, 1U);
  EXPECT_EQ(c.remote_stored, 5U);
  EXPECT_EQ(server.values.size(), 5U);
}

TEST(TieredCache, WithoutARemoteItIsTheLocalCache) {
  util::TempDir home{"portcheck-tiered-test"};
  ResultCache local{home.path(), 1 << 20};
  TieredCache cache(local, nullptr, std::nullopt);
  cache.prefetch({kKey});
  cache.store(kKey, entry(kKey));
  EXPECT_TRUE(cache.load(kKey, 0, 0));
  EXPECT_EQ(cache.counters().local_hits, 1U);
  EXPECT_EQ(cache.counters().remote_skipped, 0U);
}

}  // namespace
}  // namespace portcheck
