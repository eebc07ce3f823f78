#include "src/core/manifest.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "src/core/errors.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

class ManifestTest : public ::testing::Test {
 protected:
  util::TempDir dir{"portcheck-manifest-test"};

  std::filesystem::path write(const std::string& text) {
    std::ofstream(dir.path() / "kernels.py") << "# kernels\n";
    auto path = dir.path() / "portcheck.toml";
    std::ofstream(path) << text;
    return path;
  }

  // The one-line error load_manifest throws for `text`.
  std::string error_for(const std::string& text) {
    try {
      load_manifest(write(text));
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return {};
  }
};

const char* kGood = R"(
[defaults]
targets = ["cuda:80", "cuda:90", "hip:gfx942"]
timeout = 120
max_rss = "2GiB"

[[kernel]]
name      = "attention-fp16"
target    = "kernels.py:attention"
signature = { q_ptr = "*fp16:16", out_ptr = "*fp16:16", seq_len = "i32" }
constants = { BLOCK = 64, HEAD_DIM = 128 }
options   = { num_warps = 8, num_stages = 3 }
xfail     = ["hip:gfx942"]
  [[kernel.variant]]
  name      = "bf16"
  signature = { q_ptr = "*bf16:16", out_ptr = "*bf16:16" }
  [[kernel.variant]]
  name      = "small"
  constants = { BLOCK = 16 }

[[kernel]]
name   = "mod"
target = "mypkg.kernels:axpy"
signature = { x = "*fp32" }
)";

TEST_F(ManifestTest, ParsesDefaultsRowsAndVariants) {
  const auto m = load_manifest(write(kGood));
  EXPECT_EQ(m.targets, (std::vector<std::string>{"cuda:80", "cuda:90", "hip:gfx942"}));
  EXPECT_DOUBLE_EQ(m.timeout_s, 120);
  EXPECT_EQ(m.max_rss_bytes, 2ULL << 30);
  // The kernel's own keys give every argument its variants give: it is a row, then each variant.
  ASSERT_EQ(m.rows.size(), 4u);
  EXPECT_EQ(m.rows[0].display_name(), "attention-fp16");
  EXPECT_EQ(m.rows[0].signature["q_ptr"], "*fp16:16");
  EXPECT_EQ(m.rows[1].display_name(), "attention-fp16[bf16]");
  EXPECT_EQ(m.rows[1].signature["q_ptr"], "*bf16:16");
  EXPECT_EQ(m.rows[1].signature["seq_len"], "i32");  // inherited from the kernel
  EXPECT_EQ(m.rows[2].display_name(), "attention-fp16[small]");
  EXPECT_EQ(m.rows[2].constants["BLOCK"], 16);
  EXPECT_EQ(m.rows[2].constants["HEAD_DIM"], 128);
  EXPECT_EQ(m.rows[2].xfail, std::vector<std::string>{"hip:gfx942"});
  EXPECT_EQ(m.rows[1].ref.file, dir.path() / "kernels.py");
  EXPECT_EQ(m.rows[3].ref.module, "mypkg.kernels");
  EXPECT_EQ(m.rows[3].ref.function, "axpy");
  EXPECT_EQ(m.rows[1].location_of("options.num_warps").line, 12);
  EXPECT_TRUE(m.notes.empty());
}

// The demo's dot_small: shared constants on the kernel, a signature per variant.
TEST_F(ManifestTest, KernelLeavingArgumentsToItsVariantsIsNoRowAndSaysNothing) {
  const auto m = load_manifest(write(R"(
[[kernel]]
name      = "dot"
target    = "kernels.py:dot"
constants = { BLOCK = 32 }
  [[kernel.variant]]
  name      = "fp16"
  signature = { a = "*fp16:16", c = "*fp32:16" }
  [[kernel.variant]]
  name      = "int8"
  signature = { a = "*i8:16", c = "*i32:16" }
)"));
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].display_name(), "dot[fp16]");
  EXPECT_EQ(m.rows[1].display_name(), "dot[int8]");
  EXPECT_TRUE(m.notes.empty());
}

// A value of the kernel that every variant replaces while the kernel is no row is compiled
// nowhere: most likely an argument was forgotten in the kernel meant as a row.
TEST_F(ManifestTest, KernelValueEveryVariantReplacesIsNamedOnce) {
  const auto m = load_manifest(write(R"(
[[kernel]]
name      = "attention-fp16"
target    = "kernels.py:attention"
signature = { q_ptr = "*fp16:16", out_ptr = "*fp16:16" }
constants = { BLOCK = 64 }
  [[kernel.variant]]
  name      = "bf16"
  signature = { q_ptr = "*bf16:16", out_ptr = "*bf16:16", seq_len = "i32" }
  [[kernel.variant]]
  name      = "fp32"
  signature = { q_ptr = "*fp32:16", out_ptr = "*fp32:16", seq_len = "i32" }
)"));
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].display_name(), "attention-fp16[bf16]");
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("portcheck.toml:5: kernel 'attention-fp16'.signature.out_ptr: "
                            "\"*fp16:16\" is compiled in no row"),
            std::string::npos)
      << m.notes[0];
  EXPECT_NE(m.notes[0].find("leaves seq_len to its variants"), std::string::npos) << m.notes[0];
}

// A whole serialised specialisation is complete by itself; variants then only change options.
TEST_F(ManifestTest, KernelWithItsOwnSpecializationIsARowBesideItsVariants) {
  const auto m = load_manifest(write(R"(
[[kernel]]
name           = "mm"
target         = "kernels.py:mm"
specialization = '{"name": "mm", "signature": {}, "constant_keys": [], "constant_vals": [], "attrs_keys": [], "attrs_vals": []}'
  [[kernel.variant]]
  name    = "num_warps=8"
  options = { num_warps = 8 }
)"));
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].display_name(), "mm");
  EXPECT_EQ(m.rows[1].display_name(), "mm[num_warps=8]");
}

TEST_F(ManifestTest, DefaultTargetsWhenNoneGiven) {
  const auto m = load_manifest(write("[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\"\n"));
  EXPECT_EQ(m.targets, default_target_names());
}

TEST_F(ManifestTest, InvalidTomlNamesTheLine) {
  const auto e = error_for("[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\n");
  EXPECT_NE(e.find("portcheck.toml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("invalid TOML"), std::string::npos) << e;
}

TEST_F(ManifestTest, UnknownKeyNamesLineAndKey) {
  const auto e = error_for(
      "[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\"\nsignatur = { x = \"i32\" }\n");
  EXPECT_NE(e.find("portcheck.toml:4: kernel 'k'.signatur: unknown key"), std::string::npos) << e;
}

TEST_F(ManifestTest, BadTargetNamesLineAndIndex) {
  const auto e = error_for(
      "[defaults]\ntargets = [\"cuda:90\", "
      "\"cuda:abc\"]\n[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\n");
  EXPECT_NE(e.find("portcheck.toml:2: defaults.targets[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("cuda:abc"), std::string::npos) << e;
}

TEST_F(ManifestTest, CapturedAsIsAListOfTargetsOnAKernelOrAVariant) {
  const auto path = write(
      "[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\ncaptured_as=[\"cuda:90\"]\n"
      "signature={x=\"*fp32\"}\n[[kernel.variant]]\nname=\"a\"\nconstants={B=1}\n"
      "[[kernel.variant]]\nname=\"b\"\nconstants={B=2}\ncaptured_as=[\"hip:gfx942\"]\n");
  const auto m = load_manifest(path);
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].captured_as, std::vector<std::string>{"cuda:90"});
  EXPECT_EQ(m.rows[1].captured_as, std::vector<std::string>{"hip:gfx942"});
  const auto e = error_for(
      "[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\nsignature={x=\"*fp32\"}\n"
      "captured_as=[\"hip:942\"]\n");
  EXPECT_NE(e.find("portcheck.toml:5: kernel 'k'.captured_as[0]"), std::string::npos) << e;
}

TEST_F(ManifestTest, BadTypeStringNamesTheArgument) {
  const auto e = error_for(
      "[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\"\n\nsignature = { x = \"*fp17\" }\n");
  EXPECT_NE(e.find("portcheck.toml:5: kernel 'k'.signature.x"), std::string::npos) << e;
  EXPECT_NE(e.find("'*fp17' is not a Triton type"), std::string::npos) << e;
}

TEST_F(ManifestTest, BadSuffix) {
  const auto e = error_for(
      "[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\"\nsignature = { n = \"i32:1\" }\n");
  EXPECT_NE(e.find("only attribute suffix is ':16'"), std::string::npos) << e;
}

TEST_F(ManifestTest, MissingKernelFile) {
  const auto e = error_for("[[kernel]]\nname = \"k\"\ntarget = \"nope.py:k\"\n");
  EXPECT_NE(e.find("portcheck.toml:3: kernel 'k'.target"), std::string::npos) << e;
  EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
}

// A file name longer than the system allows (ENAMETOOLONG) is the key's error, not an escaped
// std::filesystem exception (found by fuzz_manifest: it ended the run with std::terminate).
TEST_F(ManifestTest, KernelFileNameTooLong) {
  const std::string name(5000, 'a');
  const auto e = error_for("[[kernel]]\nname = \"k\"\ntarget = \"" + name + ".py:k\"\n");
  EXPECT_NE(e.find("portcheck.toml:3: kernel 'k'.target"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be used: File name too long"), std::string::npos) << e;
  EXPECT_LT(e.size(), 1000U) << "a path past PATH_MAX is shown by its start";
}

TEST_F(ManifestTest, PythonpathFolderNameTooLong) {
  const auto e = error_for("[defaults]\npythonpath = [\"" + std::string(300, 'b') +
                           "\"]\n[[kernel]]\nname = \"k\"\ntarget = \"kernels.py:k\"\n");
  EXPECT_NE(e.find("pythonpath[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be used: File name too long"), std::string::npos) << e;
}

TEST_F(ManifestTest, MissingNameAndTarget) {
  EXPECT_NE(error_for("[[kernel]]\ntarget = \"kernels.py:k\"\n").find("missing key 'name'"),
            std::string::npos);
  EXPECT_NE(error_for("[[kernel]]\nname = \"k\"\n").find("missing key 'target'"),
            std::string::npos);
}

TEST_F(ManifestTest, BadSizeAndTimeout) {
  EXPECT_NE(
      error_for("[defaults]\nmax_rss = \"lots\"\n[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\n")
          .find("portcheck.toml:2: defaults.max_rss"),
      std::string::npos);
  EXPECT_NE(error_for("[defaults]\ntimeout = -1\n[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\n")
                .find("portcheck.toml:2: defaults.timeout: must be between 0.01 and 604800"),
            std::string::npos);
  // Values that would have meant no limit at all: rounded to 0 ms, or beyond any real wait.
  for (const char* value : {"0.0001", "1e300", "inf", "nan"})
    EXPECT_NE(error_for(std::string("[defaults]\ntimeout = ") + value +
                        "\n[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\n")
                  .find("portcheck.toml:2: defaults.timeout: must be between"),
              std::string::npos)
        << value;
}

TEST_F(ManifestTest, DuplicateRowNames) {
  const auto e = error_for(
      "[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\n[[kernel]]\nname=\"k\"\ntarget=\"kernels."
      "py:k\"\n");
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e;
}

TEST_F(ManifestTest, TypeAndConstantForTheSameArgument) {
  const auto e = error_for(
      "[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\nsignature={ B = \"i32\" }\nconstants={ B = "
      "4 }\n");
  EXPECT_NE(e.find("both a type and a constant"), std::string::npos) << e;
}

TEST_F(ManifestTest, SpecializationMustBeJson) {
  const auto e = error_for(
      "[[kernel]]\nname=\"k\"\ntarget=\"kernels.py:k\"\nspecialization = \"{not json\"\n");
  EXPECT_NE(e.find("portcheck.toml:4: kernel 'k'.specialization"), std::string::npos) << e;
}

TEST_F(ManifestTest, MissingFile) {
  try {
    load_manifest(dir.path() / "absent.toml");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no such manifest"), std::string::npos);
  }
}

TEST(TypeStrings, AcceptsTritonTypes) {
  for (const auto* t : {"*fp16", "*fp16:16", "*kbf16", "i32", "i32:16", "i64:16", "fp32", "u1",
                        "*fp8e4nv:16", "tensordesc<fp16[64, 64]>"})
    EXPECT_TRUE(is_valid_type_string(t)) << t;
  for (const auto* t : {"fp16:16", "*float", "int", "i32:8", ""})
    EXPECT_FALSE(is_valid_type_string(t)) << t;
}

TEST(Targets, ParseAndWarpSize) {
  EXPECT_EQ(parse_target("cuda:90")->warp_size, 32);
  EXPECT_EQ(parse_target("hip:gfx942")->warp_size, 64);
  EXPECT_EQ(parse_target("hip:gfx950")->warp_size, 64);
  EXPECT_EQ(parse_target("hip:gfx1100")->warp_size, 32);
  EXPECT_EQ(parse_target("hip:gfx1250")->warp_size, 32);
  std::string error;
  EXPECT_FALSE(parse_target("cuda:9.0", &error));
  EXPECT_FALSE(parse_target("rocm:gfx942", &error));
  EXPECT_NE(error.find("unknown backend"), std::string::npos);
  EXPECT_FALSE(parse_target("hip:942", &error));
}

TEST_F(ManifestTest, PythonpathFromDefaultsAndKernelAndCapturedRows) {
  std::filesystem::create_directories(dir.path() / "src");
  std::filesystem::create_directories(dir.path() / "vendor");
  const auto m = load_manifest(write(R"(
[defaults]
pythonpath = ["src"]

[[kernel]]
name       = "a"
target     = "pkg.kernels:a"
signature  = { x = "*fp32:16" }
captured   = "tests/test_a.py::test_a"

[[kernel]]
name       = "b"
pythonpath = ["vendor"]
target     = "pkg.kernels:b"
signature  = { x = "*fp32:16" }
  [[kernel.variant]]
  name      = "BLOCK=64"
  constants = { BLOCK = 64 }
  captured  = "tests/test_b.py::test_b"
)"));
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].ref.python_path, (std::vector<std::filesystem::path>{dir.path() / "src"}));
  EXPECT_EQ(m.rows[0].captured, "tests/test_a.py::test_a");
  EXPECT_EQ(m.rows[1].ref.python_path,
            (std::vector<std::filesystem::path>{dir.path() / "vendor", dir.path() / "src"}));
  EXPECT_EQ(m.rows[1].display_name(), "b[BLOCK=64]");
}

TEST_F(ManifestTest, MissingPythonpathFolderNamesLineAndIndex) {
  const auto error = error_for(R"([defaults]
pythonpath = ["nope"]
[[kernel]]
name = "a"
target = "kernels.py:a"
signature = { x = "*fp32" }
)");
  EXPECT_NE(error.find("portcheck.toml:2: defaults.pythonpath[0]: folder"), std::string::npos)
      << error;
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
}

TEST_F(ManifestTest, KernelNamesStillRefuseEquals) {
  const auto error = error_for(R"([[kernel]]
name = "a=1"
target = "kernels.py:a"
signature = { x = "*fp32" }
)");
  EXPECT_NE(error.find("kernel.name"), std::string::npos) << error;
}

}  // namespace
}  // namespace portcheck
