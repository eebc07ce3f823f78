#include "src/core/specialization.hpp"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

const char* kComplete =
    R"({"name": "k", "signature": {"x": "*fp32"}, "constant_keys": [[1]], "constant_vals": [64],
        "attrs_keys": [[0]], "attrs_vals": [[["tt.divisibility", 16]]], "options": {}})";

TEST(Specialization, TheSerialisedShapeIsAccepted) {
  EXPECT_EQ(specialization_shape_problem(nlohmann::json::parse(kComplete)), "");
}

TEST(Specialization, OtherShapesSayWhatIsExpected) {
  for (const char* text :
       {"[1,2,3]", "3", "null", R"({"signature": []})", R"({"signature": {"x": 1}})",
        R"({"signature": {}, "constant_keys": [1], "constant_vals": [1], "attrs_keys": [],
            "attrs_vals": []})",
        R"({"signature": {}, "constant_keys": [[0]], "constant_vals": [], "attrs_keys": [],
            "attrs_vals": []})",
        R"({"signature": {}, "constant_keys": [], "constant_vals": [], "attrs_keys": [],
            "attrs_vals": [], "options": 5})"}) {
    const auto problem = specialization_shape_problem(nlohmann::json::parse(text));
    EXPECT_NE(problem.find("serialize_specialization_data"), std::string::npos)
        << text << ": " << problem;
  }
}

// Issue 14, item 6: specialization = '[1,2,3]' was an internal error; now exit 2 with its line.
TEST(Specialization, TheManifestNamesFileLineAndKey) {
  util::TempDir dir("portcheck-specialization-test");
  const auto path = dir.path() / "portcheck.toml";
  std::ofstream(dir.path() / "kernels.py") << "# kernels\n";
  std::ofstream(path) << "[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\"\n"
                         "specialization = '[1,2,3]'\n";
  try {
    load_manifest(path);
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("portcheck.toml:4: kernel 'k'.specialization: is a JSON array"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace portcheck
