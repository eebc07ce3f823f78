#include "src/core/target.hpp"

#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace portcheck {
namespace {

TEST(Backends, NamedBothWays) {
  for (const auto backend : {Backend(Backend::cuda), Backend(Backend::hip)})
    EXPECT_EQ(Backend::named(backend.name()), backend) << backend.name();
  EXPECT_EQ(Backend::named("hip"), Backend::hip);
  EXPECT_FALSE(Backend::named("rocm"));
  EXPECT_FALSE(Backend::named(""));
  EXPECT_EQ(nlohmann::json(Backend(Backend::hip)), "hip");
}

TEST(Targets, ParsedIntoTheirParts) {
  const auto t = parse_target("hip:gfx90a");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->backend, Backend::hip);
  EXPECT_EQ(t->arch, "gfx90a");
  EXPECT_EQ(t->warp_size, 64);
  EXPECT_EQ(t->name(), "hip:gfx90a");
  for (const auto& name : default_target_names()) EXPECT_EQ(checked_target(name).name(), name);
  // What the worker is told of a target, as it was before Target was typed.
  EXPECT_EQ(nlohmann::json(*t).dump(), R"({"arch":"gfx90a","backend":"hip","warp_size":64})");
}

TEST(Targets, TheWarpSizeRule) {
  EXPECT_EQ(warp_size_for(Backend::cuda, "120"), 32);
  for (const auto* arch : {"gfx908", "gfx90a", "gfx942", "gfx950"})
    EXPECT_EQ(warp_size_for(Backend::hip, arch), 64) << arch;
  for (const auto* arch : {"gfx1030", "gfx1100", "gfx1201", "gfx1250"})
    EXPECT_EQ(warp_size_for(Backend::hip, arch), 32) << arch;
}

TEST(Targets, ErrorsNameTheFormsOfEveryBackend) {
  const auto error_of = [](const char* text) {
    std::string error;
    EXPECT_FALSE(parse_target(text, &error)) << text;
    return error;
  };
  EXPECT_EQ(error_of("gfx942"),
            "'gfx942' is not a target: expected cuda:<capability> (cuda:90) or hip:<gfx arch> "
            "(hip:gfx942)");
  EXPECT_EQ(error_of("rocm:gfx942"),
            "'rocm:gfx942': unknown backend 'rocm' (expected cuda or hip)");
  EXPECT_EQ(error_of("cuda:9.0"),
            "'cuda:9.0': a CUDA target is a compute capability without the dot, such as cuda:80 "
            "or cuda:90");
  EXPECT_EQ(error_of("hip:942"),
            "'hip:942': a HIP target is an AMD gfx architecture, such as hip:gfx942");
  EXPECT_FALSE(parse_target("cuda:90:1"));
  EXPECT_FALSE(parse_target("hip:gfx"));
  EXPECT_THROW(checked_target("cuda:9.0"), std::logic_error);
}

}  // namespace
}  // namespace portcheck
