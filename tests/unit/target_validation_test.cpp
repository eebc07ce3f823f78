#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/check/plan.hpp"
#include "src/check/triton_validation.hpp"
#include "src/core/errors.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

// What the probe says of a target the installed Triton cannot compile for (tables.py).
TargetDescription refused(const std::string& backend, const std::string& arch,
                          const std::string& reason) {
  TargetDescription out;
  out.name = backend + ":" + arch;
  out.backend = backend;
  out.arch = arch;
  out.error = "no";
  out.unsupported = TargetProblem{reason,
                                  "sm_999a is not an architecture any of its bundled ptxas knows",
                                  {"80", "90"},
                                  {"90"}};
  return out;
}

TargetDescription compilable(const std::string& backend, const std::string& arch) {
  TargetDescription out;
  out.name = backend + ":" + arch;
  out.backend = backend;
  out.arch = arch;
  out.warp_size = 32;
  return out;
}

class TargetValidation : public ::testing::Test {
 protected:
  util::TempDir dir{"portcheck-target-validation-test"};

  Manifest load(const std::string& text) {
    std::ofstream(dir.path() / "kernels.py") << "# kernels\n";
    const auto path = dir.path() / "portcheck.toml";
    std::ofstream(path) << text;
    return load_manifest(path);
  }

  static std::string error_of(const Manifest& m, const Matrix& matrix,
                              const std::vector<TargetDescription>& targets) {
    try {
      validate_targets(m, matrix, targets, "3.9.0");
    } catch (const UsageError& e) {
      return e.what();
    }
    return {};
  }
};

constexpr const char* kRows = R"(
[defaults]
targets = ["cuda:80", "cuda:999"]

[[kernel]]
name = "a"
target = "kernels.py:a"

[[kernel]]
name = "b"
target = "kernels.py:b"
targets = ["hip:gfx1"]
)";

// Issue 14, item 5: cuda:999 and hip:gfx1 were compiled and reported as new failures.
TEST_F(TargetValidation, NamesWhereTheTargetWasAskedFor) {
  const auto m = load(kRows);
  const auto matrix = plan_matrix(m, {}, "");
  const auto path = (dir.path() / "portcheck.toml").string();
  EXPECT_EQ(error_of(m, matrix, {refused("cuda", "999", "unknown")}),
            path +
                ":3: defaults.targets: 'cuda:999' is not a target the installed Triton 3.9.0 "
                "knows: sm_999a is not an architecture any of its bundled ptxas knows; valid "
                "targets: cuda:80, cuda:90");
  EXPECT_NE(error_of(m, matrix, {refused("hip", "gfx1", "unknown")})
                .find(path + ":12: kernel 'b'.targets: 'hip:gfx1'"),
            std::string::npos);
  const auto flagged = plan_matrix(m, {"cuda:88"}, "");
  const auto e = error_of(m, flagged, {refused("cuda", "88", "unsupported")});
  EXPECT_TRUE(
      e.starts_with("--targets: 'cuda:88' is a CUDA architecture, but the installed "
                    "Triton 3.9.0 cannot compile for it"))
      << e;
}

TEST_F(TargetValidation, TargetsTritonDescribesPass) {
  const auto m = load(kRows);
  const auto matrix = plan_matrix(m, {}, "");
  EXPECT_EQ(error_of(m, matrix, {compilable("cuda", "80")}), "");
  EXPECT_EQ(error_of(m, matrix, {}), "");
}

// Issue 14, item 5: `--triton 3.8.0,current` refused the whole run when one release could not
// compile for a target. Now only a target no requested release can compile for is refused.
TEST_F(TargetValidation, AcrossReleasesOnlyATargetNoneCanCompileForIsRefused) {
  const auto m = load(kRows);
  const auto matrix = plan_matrix(m, {"cuda:80", "cuda:107"}, "");
  const auto described = refused("cuda", "107", "unknown");
  const ReleaseTargets old_release{"3.8.0", {{"cuda:107", described}}};
  const ReleaseTargets new_release{"3.9.0", {}};
  const auto error = [&](const std::vector<ReleaseTargets>& releases) -> std::string {
    try {
      validate_targets_across(m, matrix, releases);
    } catch (const UsageError& e) {
      return e.what();
    }
    return {};
  };
  EXPECT_EQ(error({old_release, new_release}), "");
  EXPECT_EQ(error({new_release, old_release}), "");
  EXPECT_EQ(error({}), "");
  const ReleaseTargets also_old{"3.7.0", {{"cuda:107", described}}};
  const auto both = error({old_release, also_old});
  EXPECT_TRUE(
      both.starts_with("--targets: no requested Triton release can compile for "
                       "'cuda:107': 'cuda:107' is not a target the installed Triton 3.8.0 "
                       "knows"))
      << both;
  EXPECT_NE(both.find(" | 'cuda:107' is not a target the installed Triton 3.7.0 knows"),
            std::string::npos)
      << both;
}

TEST_F(TargetValidation, UnsupportedTargetsAreThoseTheProbeMarked) {
  const auto found =
      unsupported_targets({refused("cuda", "107", "unknown"), compilable("cuda", "80")});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.begin()->first, "cuda:107");
}

}  // namespace
}  // namespace portcheck
