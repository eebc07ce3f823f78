// The result cache must never trust what it reads back: damage of any kind is a miss.
#include "src/run/result_cache.hpp"

#include <gtest/gtest.h>

#include "util/fs.hpp"

namespace portcheck {
namespace {

const std::string kKey(64, 'a');

nlohmann::json entry() {
  return {{"key", kKey},
          {"origin", "/src/kernels"},
          {"result",
           {{"status", "ok"},
            {"compile_s", 0.5},
            {"stages", {{"ttir", 0.1}, {"ttgir", 0.4}}},
            {"metadata", {{"num_warps", 4}}},
            {"sizes", {{"cubin", 5000}}},
            {"source", nullptr},
            {"resources", nlohmann::json::object()}}},
          {"stderr", ""},
          {"last_stage", "cubin"},
          {"wall_s", 0.7},
          {"peak_rss_bytes", 300 << 20}};
}

class CacheTest : public ::testing::Test {
 protected:
  std::filesystem::path file() const {
    return dir_.path() / "results" / kKey.substr(0, 2) / (kKey + ".json");
  }
  // Rewrites the stored file as `edit` leaves its JSON text.
  void damage(const std::function<void(std::string&)>& edit) {
    auto text = util::read_file(file());
    edit(text);
    util::atomic_write_file(file(), text);
  }
  void damage_json(const std::function<void(nlohmann::json&)>& edit) {
    damage([&](std::string& text) {
      auto j = nlohmann::json::parse(text);
      edit(j);
      text = j.dump();
    });
  }
  util::TempDir dir_{"portcheck-cache-test"};
  ResultCache cache_{dir_.path(), 1 << 20};
};

TEST_F(CacheTest, StoredEntryReadsBackAsStored) {
  cache_.store(kKey, entry());
  const auto loaded = cache_.load(kKey);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->at("result"), entry().at("result"));
  EXPECT_EQ(cache_.damaged(), 0u);
}

TEST_F(CacheTest, EveryKindOfDamageIsAMiss) {
  const std::vector<std::function<void(nlohmann::json&)>> edits = {
      [](nlohmann::json& j) { j["result"]["compile_s"] = "x"; },
      [](nlohmann::json& j) { j["stderr"] = 5; },
      [](nlohmann::json& j) { j.erase("result"); },
      [](nlohmann::json& j) { j["result"] = nullptr; },
      [](nlohmann::json& j) { j["result"]["status"] = "error"; },  // well-typed, but not ours
      [](nlohmann::json& j) { j["result"]["stages"]["ttir"] = "slow"; },
      [](nlohmann::json& j) { j = nlohmann::json::array(); },
  };
  std::size_t n = 0;
  for (const auto& edit : edits) {
    cache_.store(kKey, entry());
    damage_json(edit);
    EXPECT_FALSE(cache_.load(kKey).has_value()) << "edit " << n;
    ++n;
  }
  cache_.store(kKey, entry());
  damage([](std::string& text) { text[text.find("stages") + 1] ^= 0x01; });  // one flipped bit
  EXPECT_FALSE(cache_.load(kKey).has_value());
  cache_.store(kKey, entry());
  damage([](std::string& text) { text.resize(text.size() / 2); });  // torn
  EXPECT_FALSE(cache_.load(kKey).has_value());
  EXPECT_EQ(cache_.damaged(), edits.size() + 2);
}

TEST_F(CacheTest, AnEarlierVersionsEntryIsAQuietMiss) {
  cache_.store(kKey, entry());
  damage_json([](nlohmann::json& j) {
    j.erase("schema");
    j.erase("checksum");
  });
  EXPECT_FALSE(cache_.load(kKey).has_value());
  EXPECT_EQ(cache_.damaged(), 0u);
}

TEST_F(CacheTest, AnEntryThatSaysItIsOkButIsMistypedIsRefusedEvenWithAGoodChecksum) {
  auto bad = entry();
  bad["result"]["sizes"]["cubin"] = "big";
  cache_.store(kKey, bad);
  EXPECT_FALSE(cache_.load(kKey).has_value());
}

nlohmann::json failed_entry() {
  auto e = entry();
  e["result"] = {{"status", "error"},
                 {"stage", "frontend"},
                 {"error",
                  {{"type", "triton.compiler.errors.CompilationError"},
                   {"message", "at 3:4: no tgamma"},
                   {"traceback", "Traceback ..."}}},
                 {"stages", {{"frontend", 0.2}}},
                 {"compile_s", 0.2},
                 {"error_source", {{"file", "/src/kernels/k.py"}, {"line", 12}}},
                 {"source", nullptr}};
  return e;
}

// A shared store's entry sealed with a good checksum but forged inside (issue 28): every field
// the tool reads is checked at load, local and remote entries alike, and anything else is a miss.
TEST_F(CacheTest, ASealedEntryForgedInsideIsAMissWhateverTheField) {
  cache_.store(kKey, failed_entry());
  ASSERT_TRUE(cache_.load(kKey).has_value());
  const std::vector<std::function<void(nlohmann::json&)>> forgeries = {
      [](nlohmann::json& r) {
        r["error"]["message"] = nlohmann::json::array({"a", "b"});
      },
      [](nlohmann::json& r) { r["error"]["traceback"] = nlohmann::json::array(); },
      [](nlohmann::json& r) { r["error"]["type"] = nlohmann::json::array(); },
      [](nlohmann::json& r) { r["error"] = nlohmann::json::object(); },
      [](nlohmann::json& r) { r["error"]["kind"] = 17; },
      [](nlohmann::json& r) { r["error_source"]["line"] = "twelve"; },
      [](nlohmann::json& r) { r["error_source"] = nlohmann::json::array(); },
      [](nlohmann::json& r) { r["stage"] = ""; },
      [](nlohmann::json& r) { r["compile_s"] = -1; },
      [](nlohmann::json& r) { r.erase("error"); },
      [](nlohmann::json& r) { r["verdict"] = "ok"; },
      [](nlohmann::json& r) {  // an ok result that carries an error
        r["status"] = "ok";
      },
  };
  std::size_t n = 0;
  for (const auto& forge : forgeries) {
    auto forged = failed_entry();
    forge(forged["result"]);
    cache_.store(kKey, forged);  // sealed: its checksum holds
    EXPECT_FALSE(cache_.load(kKey).has_value()) << "forgery " << n;
    std::string problem;
    EXPECT_FALSE(ResultCache::check_entry(ResultCache::seal(forged), kKey, &problem).has_value());
    EXPECT_FALSE(problem.empty()) << "forgery " << n;
    ++n;
  }
  auto extra = entry();
  extra["result"]["error"] = {{"type", "x"}, {"message", "y"}};  // ok, yet an error inside
  cache_.store(kKey, extra);
  EXPECT_FALSE(cache_.load(kKey).has_value());
  // Said once per run, not once per entry.
  EXPECT_EQ(cache_.damaged(), forgeries.size() + 1);
}

// `--max-rss 1` once served a cached ok: a verdict reached under looser limits must not stand.
TEST(CachedVerdict, StandsOnlyWithinThisRunsLimits) {
  const auto e = entry();  // 0.7 s, 300 MiB
  EXPECT_TRUE(fits_limits(e, 0, 0));
  EXPECT_TRUE(fits_limits(e, 10, 1ULL << 30));
  EXPECT_FALSE(fits_limits(e, 0.5, 0));
  EXPECT_FALSE(fits_limits(e, 0, 1));
  EXPECT_FALSE(fits_limits(e, 0, 100 << 20));
}

}  // namespace
}  // namespace portcheck

namespace portcheck {
namespace {

TEST(CellTimings, MeanOfEveryRowOnATargetForACellWithNoHistory) {
  const util::TempDir dir("portcheck-timings-test");
  const auto file = dir.path() / "timings.json";
  util::atomic_write_file(file, R"({"axpy|cuda:90|3.9.0": 1.0, "dot|a|b|cuda:90|3.9.0": 3.0,
                                    "axpy|hip:gfx942|3.9.0": 5.0, "no-bars": 9.0})");
  const CellTimings timings(file);
  EXPECT_EQ(timings.get("axpy|cuda:90|3.9.0"), 1.0);
  EXPECT_EQ(timings.mean_of_suffix("cuda:90|3.9.0"), 2.0);  // a row name may hold "|"
  EXPECT_EQ(timings.mean_of_suffix("hip:gfx942|3.9.0"), 5.0);
  EXPECT_EQ(timings.mean_of_suffix("cuda:80|3.9.0"), std::nullopt);
}

}  // namespace
}  // namespace portcheck
