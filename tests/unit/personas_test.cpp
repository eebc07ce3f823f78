// data/device-personas.toml as `capture --as` reads it.
#include <gtest/gtest.h>

#include "src/capture/personas.hpp"
#include "src/core/errors.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

const std::filesystem::path kTable =
    std::filesystem::path(PORTCHECK_SOURCE_DIR) / "data" / "device-personas.toml";

TEST(Personas, EveryDefaultTargetButOneHasADeviceWithEveryFieldTheHookReads) {
  for (const auto& name : default_target_names()) {
    if (name == "hip:gfx1250") continue;  // no shipping product with public figures
    // load_personas refuses a device without a field persona.py reads (next test).
    const auto persona = load_personas(kTable, {name}).front();
    EXPECT_EQ(persona.device.at("target"), name);
    EXPECT_EQ(persona.device.at("warp_size"), persona.target.warp_size) << name;
  }
  const auto h100 = load_personas(kTable, {"cuda:90"}).front();
  EXPECT_EQ(h100.device.at("capability"), nlohmann::json::array({9, 0}));
  EXPECT_EQ(h100.device.at("shared_memory_per_block"), 49152);  // the backend's defaults
  const auto mi300 = load_personas(kTable, {"hip:gfx942"}).front();
  EXPECT_EQ(mi300.device.at("gcnArchName"), "gfx942:sramecc+:xnack-");
  EXPECT_EQ(mi300.device.at("capability"), nlohmann::json::array({9, 4}));
}

TEST(Personas, ADeviceWithoutAFieldTheHookReadsIsADamagedInstall) {
  util::TempDir dir("portcheck-personas-test");
  const auto table = dir.path() / "device-personas.toml";
  util::atomic_write_file(table, "[cuda.90]\nname = \"GPU\"\nmulti_processor_count = 1\n");
  try {
    load_personas(table, {"cuda:90"});
    ADD_FAILURE() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the device of cuda:90 is not a persona the capture hook can answer with: "
                  "capture_persona: missing member \"total_memory\""),
              std::string::npos)
        << e.what();
  }
}

TEST(Personas, UnknownMalformedAndRepeatedNamesAreRefused) {
  EXPECT_THROW(load_personas(kTable, {"hip:gfx1250"}), UsageError);
  EXPECT_THROW(load_personas(kTable, {"cuda:9x"}), UsageError);
  EXPECT_THROW(load_personas(kTable, {"cuda:90", "cuda:90"}), UsageError);
  EXPECT_EQ(load_personas(kTable, {"hip:gfx942", "cuda:80"}).size(), 2u);
}

}  // namespace
}  // namespace portcheck
