// data/device-personas.toml as `capture --as` reads it.
#include <gtest/gtest.h>

#include "src/capture/personas.hpp"
#include "src/core/errors.hpp"

namespace portcheck {
namespace {

const std::filesystem::path kTable =
    std::filesystem::path(PORTCHECK_SOURCE_DIR) / "data" / "device-personas.toml";

TEST(Personas, EveryDefaultTargetButOneHasADeviceWithEveryFieldTheHookReads) {
  const std::vector<std::string> fields = {"name",
                                           "multi_processor_count",
                                           "total_memory",
                                           "warp_size",
                                           "shared_memory_per_block",
                                           "shared_memory_per_block_optin",
                                           "capability",
                                           "shared_memory_per_multiprocessor",
                                           "max_threads_per_multi_processor",
                                           "L2_cache_size",
                                           "regs_per_multiprocessor",
                                           "is_integrated",
                                           "sm_clock_rate",
                                           "mem_clock_rate",
                                           "mem_bus_width"};
  for (const auto& name : default_target_names()) {
    if (name == "hip:gfx1250") continue;  // no shipping product with public figures
    const auto persona = load_personas(kTable, {name}).front();
    EXPECT_EQ(persona.device.at("target"), name);
    for (const auto& field : fields) EXPECT_TRUE(persona.device.contains(field)) << name << field;
    EXPECT_EQ(persona.device.at("warp_size"), persona.target.warp_size) << name;
  }
  const auto h100 = load_personas(kTable, {"cuda:90"}).front();
  EXPECT_EQ(h100.device.at("capability"), nlohmann::json::array({9, 0}));
  EXPECT_EQ(h100.device.at("shared_memory_per_block"), 49152);  // the backend's defaults
  const auto mi300 = load_personas(kTable, {"hip:gfx942"}).front();
  EXPECT_EQ(mi300.device.at("gcnArchName"), "gfx942:sramecc+:xnack-");
}

TEST(Personas, UnknownMalformedAndRepeatedNamesAreRefused) {
  EXPECT_THROW(load_personas(kTable, {"hip:gfx1250"}), UsageError);
  EXPECT_THROW(load_personas(kTable, {"cuda:9x"}), UsageError);
  EXPECT_THROW(load_personas(kTable, {"cuda:90", "cuda:90"}), UsageError);
  EXPECT_EQ(load_personas(kTable, {"hip:gfx942", "cuda:80"}).size(), 2u);
}

}  // namespace
}  // namespace portcheck
