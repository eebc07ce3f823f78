// Records of the capture hook -> manifest rows -> TOML text, and merging into a manifest.
#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <gtest/gtest.h>

#include "src/capture/capture_rows.hpp"
#include "src/capture/gpu_devices.hpp"
#include "src/capture/manifest_writer.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// A launch as Triton 3.9's serialize_specialization_data describes add(x, y, out, n, BLOCK).
CapturedLaunch add_launch(const std::string& x_type, bool x_aligned, bool n_divisible,
                          int block = 256) {
  CapturedLaunch launch;
  launch.module = "pkg.kernels";
  launch.qualname = "add";
  launch.file = "/work/repo/pkg/kernels.py";
  launch.line = 7;
  launch.import_root = std::filesystem::path("/work/repo");
  launch.arg_names = {"x", "y", "out", "n", "BLOCK"};
  launch.test = "tests/test_add.py::test_add";
  auto attrs_vals = nlohmann::json::array();
  for (bool d : {x_aligned, true, true, n_divisible, false})
    attrs_vals.push_back(d ? nlohmann::json::array({nlohmann::json::array({"tt.divisibility", 16})})
                           : nlohmann::json::array());
  launch.specialization = {
      {"name", "pkg.kernels.add"},
      {"signature",
       {{"x", x_type}, {"y", x_type}, {"out", x_type}, {"n", "i32"}, {"BLOCK", "constexpr"}}},
      {"constant_keys", {{4}}},
      {"constant_vals", {block}},
      {"attrs_keys", {{0}, {1}, {2}, {3}, {4}}},
      {"attrs_vals", attrs_vals},
      {"options", {{"num_warps", 4}, {"arch", "sm90"}}},
      {"key", "..."}};
  return launch;
}

std::vector<std::string> variant_names(const CapturedKernel& kernel) {
  std::vector<std::string> out;
  for (const auto& row : kernel.rows) out.push_back(row.variant);
  return out;
}

TEST(CaptureRows, SignatureCarriesDivisibilityAndConstantsTheConstexprs) {
  const auto row = row_from_launch(add_launch("*fp16", false, true));
  ASSERT_FALSE(row.specialization);
  const OrderedFields expected_sig = {
      {"x", "*fp16"}, {"y", "*fp16:16"}, {"out", "*fp16:16"}, {"n", "i32:16"}};
  EXPECT_EQ(row.signature, expected_sig);
  const OrderedFields expected_constants = {{"BLOCK", 256}};
  EXPECT_EQ(row.constants, expected_constants);
  EXPECT_TRUE(row.options.empty());  // the stand-in target's defaults are not copied
  EXPECT_EQ(row.captured, "tests/test_add.py::test_add");
}

TEST(CaptureRows, NoneBecomesTheManifestsNoneSpelling) {
  auto launch = add_launch("*fp32", true, true);
  launch.specialization["signature"]["y"] = "constexpr";
  launch.specialization["constant_keys"] = {{1}, {4}};
  launch.specialization["constant_vals"] = {nullptr, 256};
  const auto row = row_from_launch(launch);
  ASSERT_FALSE(row.specialization);
  EXPECT_EQ(row.constants.front().first, "y");
  EXPECT_EQ(row.constants.front().second, (nlohmann::json{{"none", true}}));
}

TEST(CaptureRows, TupleArgumentsFallBackToTheWholeSpecialisation) {
  auto launch = add_launch("*fp32", true, true);
  launch.specialization["signature"]["x"] = {"*fp32", "*fp32"};
  launch.specialization["attrs_keys"] = {{0, 0}};
  launch.specialization["attrs_vals"] = {{{"tt.divisibility", 16}}};
  launch.explicit_options = {{"num_warps", 8}, {"maxnreg", nullptr}};
  const auto row = row_from_launch(launch);
  ASSERT_TRUE(row.specialization);
  const auto spec = nlohmann::json::parse(*row.specialization);
  EXPECT_FALSE(spec.contains("key"));
  EXPECT_FALSE(spec.contains("target"));
  // Only the caller's options travel: each target compiles with its own defaults.
  EXPECT_EQ(spec["options"], (nlohmann::json{{"num_warps", 8}}));
  EXPECT_TRUE(row.signature.empty());
}

TEST(CaptureRows, WholeSpecialisationRowsAreNamedByWhatDiffersToo) {
  std::vector<CapturedLaunch> launches;
  for (int block : {64, 128}) {
    auto launch = add_launch("*fp32", true, true, block);
    launch.specialization["signature"]["x"] = {"*fp32", "*fp32"};
    launch.specialization["attrs_keys"] = {{0, 0}};
    launch.specialization["attrs_vals"] = {{{"tt.divisibility", 16}}};
    launches.push_back(launch);
  }
  const auto summary = build_captured_kernels(launches, "/work/repo");
  EXPECT_EQ(variant_names(summary.kernels.front()),
            (std::vector<std::string>{"BLOCK=64", "BLOCK=128"}));
}

TEST(CaptureRows, DuplicatesMergeAndVariantsAreNamedByWhatDiffers) {
  const std::vector<CapturedLaunch> launches = {
      add_launch("*fp32", true, true), add_launch("*fp32", true, true),
      add_launch("*fp16", true, true), add_launch("*fp32", false, true),
      add_launch("*fp32", true, false)};
  const auto summary = build_captured_kernels(launches, "/work/repo");
  ASSERT_EQ(summary.kernels.size(), 1u);
  const auto& kernel = summary.kernels.front();
  EXPECT_EQ(kernel.name, "add");
  EXPECT_EQ(kernel.target, "pkg.kernels:add");
  EXPECT_TRUE(kernel.python_path.empty());  // imported from the manifest's own folder
  EXPECT_EQ(variant_names(kernel),
            (std::vector<std::string>{"fp16", "fp32", "fp32-n.not16", "fp32-x.unaligned"}));
}

TEST(CaptureRows, ALaunchEveryPersonaMadeIsOneSharedRowAndAChoiceOfOneIsItsOwn) {
  const auto as = [](CapturedLaunch launch, const std::string& persona, int warps) {
    launch.persona = persona;
    launch.explicit_options = {{"num_warps", warps}};
    return launch;
  };
  const auto base = add_launch("*fp32", true, true);
  const std::vector<CapturedLaunch> launches = {as(base, "cuda:90", 4), as(base, "hip:gfx942", 4),
                                                as(base, "cuda:90", 32),
                                                as(base, "hip:gfx942", 16)};
  const auto summary = build_captured_kernels(launches, "/work/repo");
  ASSERT_EQ(summary.kernels.size(), 1u);
  std::map<std::string, std::vector<std::string>> personas;
  for (const auto& row : summary.kernels.front().rows) personas[row.variant] = row.captured_as;
  EXPECT_EQ(personas, (std::map<std::string, std::vector<std::string>>{
                          {"num_warps=4", {"cuda:90", "hip:gfx942"}},
                          {"num_warps=16", {"hip:gfx942"}},
                          {"num_warps=32", {"cuda:90"}}}));
  const auto text = render_captured_manifest(summary.kernels, {}).text;
  EXPECT_NE(text.find("  captured_as = [\"hip:gfx942\"]\n"), std::string::npos) << text;
  // Read back as `check` reads it.
  util::TempDir dir("portcheck-capture-test");
  util::atomic_write_file(dir.path() / "portcheck.toml", text);
  const auto manifest = load_manifest(dir.path() / "portcheck.toml");
  ASSERT_EQ(manifest.rows.size(), 3u);
  EXPECT_EQ(manifest.rows[0].captured_as, (std::vector<std::string>{"cuda:90", "hip:gfx942"}));
}

TEST(CaptureRows, PersonasSharedByEveryRowAreWrittenOnceOnTheKernel) {
  auto fp16 = add_launch("*fp16", true, true), fp32 = add_launch("*fp32", true, true);
  std::vector<CapturedLaunch> launches;
  for (const char* persona : {"cuda:90", "hip:gfx942"})
    for (auto launch : {fp16, fp32}) {
      launch.persona = persona;
      launches.push_back(launch);
    }
  const auto text =
      render_captured_manifest(build_captured_kernels(launches, "/work/repo").kernels, {}).text;
  EXPECT_NE(text.find("\ncaptured_as = [\"cuda:90\", \"hip:gfx942\"]\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("  captured_as"), std::string::npos) << text;
}

TEST(CaptureRows, ConstexprNamesOrderNumerically) {
  const std::vector<CapturedLaunch> launches = {add_launch("*fp32", true, true, 128),
                                                add_launch("*fp32", true, true, 32)};
  const auto summary = build_captured_kernels(launches, "/work/repo");
  EXPECT_EQ(variant_names(summary.kernels.front()),
            (std::vector<std::string>{"BLOCK=32", "BLOCK=128"}));
}

// A kernel of a real library (issue 34): a dozen optional pointers, mixed dtypes, string and bool
// constexprs and divisibility over a test matrix of 100 launches. Capture named such rows with up
// to 279 characters, which `check` refuses; every name must now load, stay unique and stable,
// and keep the whole description beside it.
std::vector<CapturedLaunch> library_launches(unsigned seed) {
  std::mt19937 rng(seed);
  const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::vector<std::string> pointers = {"*bf16", "*fp32", "*fp16"};
  std::vector<CapturedLaunch> launches;
  for (int i = 0; i < 100; ++i) {
    CapturedLaunch launch = add_launch("*fp32", true, true);
    launch.qualname = "cross_entropy";
    launch.arg_names.clear();
    nlohmann::json signature = nlohmann::json::object(), constant_keys = nlohmann::json::array(),
                   constant_vals = nlohmann::json::array(), attrs_keys = nlohmann::json::array(),
                   attrs_vals = nlohmann::json::array();
    const auto argument = [&](const std::string& name, const std::string& type, bool divisible) {
      attrs_keys.push_back({launch.arg_names.size()});
      attrs_vals.push_back(divisible ? nlohmann::json::array({{"tt.divisibility", 16}})
                                     : nlohmann::json::array());
      signature[name] = type;
      launch.arg_names.push_back(name);
    };
    const auto constant = [&](const std::string& name, const nlohmann::json& value) {
      constant_keys.push_back({launch.arg_names.size()});
      constant_vals.push_back(value);
      signature[name] = "constexpr";
      launch.arg_names.push_back(name);
    };
    for (int p = 0; p < 12; ++p) {
      const auto choice = pick(pointers.size() + 1);
      if (choice == pointers.size())
        constant(fmt::format("opt{}_ptr", p), nullptr);  // an optional pointer left out
      else
        argument(fmt::format("opt{}_ptr", p), pointers[choice], pick(2) == 0);
    }
    argument("n_rows", pick(2) == 0 ? "i32" : "i64", pick(2) == 0);
    constant("REDUCTION", std::vector<std::string>{"mean", "sum", "none"}[pick(3)]);
    constant("HAS_SOFTCAP", pick(2) == 0);
    constant("BLOCK", 256 << pick(3));
    launch.specialization["signature"] = signature;
    launch.specialization["constant_keys"] = constant_keys;
    launch.specialization["constant_vals"] = constant_vals;
    launch.specialization["attrs_keys"] = attrs_keys;
    launch.specialization["attrs_vals"] = attrs_vals;
    launches.push_back(launch);
  }
  return launches;
}

TEST(CaptureRows, NamesOfALibraryKernelsManyFacetsLoadAsWrittenAndStayStable) {
  const auto summary = build_captured_kernels(library_launches(7), "/work/repo");
  ASSERT_EQ(summary.kernels.size(), 1u);
  const auto& rows = summary.kernels.front().rows;
  ASSERT_GT(rows.size(), 50u);
  std::set<std::string> names;
  std::size_t shortened = 0;
  for (const auto& row : rows) {
    EXPECT_LE(row.variant.size(), 64u) << row.variant;
    EXPECT_TRUE(names.insert(row.variant).second) << row.variant;
    if (!row.variant_in_full.empty()) {
      ++shortened;
      EXPECT_GT(row.variant_in_full.size(), 64u);
      // Its readable start is the whole name's.
      EXPECT_EQ(row.variant_in_full.substr(0, 20), row.variant.substr(0, 20));
    }
  }
  EXPECT_GT(shortened, 0u);
  // The same launches in another order (another run, another machine): the same names.
  auto shuffled = library_launches(7);
  std::reverse(shuffled.begin(), shuffled.end());
  const auto again = build_captured_kernels(shuffled, "/work/repo");
  EXPECT_EQ(variant_names(again.kernels.front()), variant_names(summary.kernels.front()));
  // Written and read back as `check` reads it: every row, no edit; the whole names as comments.
  const auto text = render_captured_manifest(summary.kernels, {}).text;
  for (const auto& row : rows) {
    if (!row.variant_in_full.empty()) {
      EXPECT_NE(text.find("  # " + row.variant_in_full + "\n"), std::string::npos);
    }
  }
  util::TempDir dir("portcheck-capture-test");
  util::atomic_write_file(dir.path() / "portcheck.toml", text);
  const auto manifest = load_manifest(dir.path() / "portcheck.toml");
  EXPECT_EQ(manifest.rows.size(), rows.size());
}

// Launches of add() differing only in a string constexpr (BLOCK), one per value.
std::vector<CapturedLaunch> launches_with_blocks(const std::vector<std::string>& values) {
  std::vector<CapturedLaunch> launches;
  for (const auto& value : values) {
    auto launch = add_launch("*fp32", true, true);
    launch.specialization["constant_vals"] = {value};
    launches.push_back(launch);
  }
  return launches;
}

void expect_unique_names_that_load(const CapturedKernel& kernel) {
  const auto names = variant_names(kernel);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size())
      << fmt::format("{}", fmt::join(names, " "));
  util::TempDir dir("portcheck-capture-test");
  util::atomic_write_file(dir.path() / "portcheck.toml",
                          render_captured_manifest({kernel}, {}).text);
  EXPECT_EQ(load_manifest(dir.path() / "portcheck.toml").rows.size(), names.size());
}

// Issue 42: a launch whose own name is what another's becomes, "-2" after two rows that want one
// name, or a long name's shortened form, was given twice and `check` refused the manifest.
TEST(CaptureRows, NamesAreUniqueByConstructionAgainstNumberedAndShortenedOnes) {
  // "v/1" and "v:1" both want BLOCK=v_1; a third launch's own name is BLOCK=v_1-2.
  auto summary =
      build_captured_kernels(launches_with_blocks({"v/1", "v:1", "v_1-2"}), "/work/repo");
  ASSERT_EQ(summary.kernels.size(), 1u);
  expect_unique_names_that_load(summary.kernels.front());
  const auto numbered = variant_names(summary.kernels.front());
  EXPECT_NE(std::find(numbered.begin(), numbered.end(), "BLOCK=v_1-2"), numbered.end());

  // The long name shortens to its first 48 characters and a hash of the whole; another launch is
  // named exactly that.
  const std::string long_value(80, 'a');
  const auto whole = "BLOCK=" + long_value;
  const auto short_form = whole.substr(0, 48) + "-" + util::sha1_hex(whole).substr(0, 10);
  summary = build_captured_kernels(
      launches_with_blocks({long_value, short_form.substr(6), "plain"}), "/work/repo");
  ASSERT_EQ(summary.kernels.size(), 1u);
  expect_unique_names_that_load(summary.kernels.front());
  for (const auto& row : summary.kernels.front().rows)
    if (row.variant == short_form) EXPECT_TRUE(row.variant_in_full.empty()) << "its own name";
}

// Issue 42, item 13: live capture says it needs a GPU before it runs the command.
TEST(GpuDevices, OnlyNodesOfAGpuCount) {
  util::TempDir dev("portcheck-dev");
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia-caps", "null", "dri"})
    util::atomic_write_file(dev.path() / name, "");
  EXPECT_TRUE(gpu_device_nodes(dev.path()).empty());
  util::atomic_write_file(dev.path() / "nvidia0", "");
  util::atomic_write_file(dev.path() / "kfd", "");
  EXPECT_EQ(gpu_device_nodes(dev.path()),
            (std::vector<std::filesystem::path>{dev.path() / "kfd", dev.path() / "nvidia0"}));
  EXPECT_TRUE(gpu_device_nodes(dev.path() / "missing").empty());
}

TEST(CaptureRows, ImportRootElsewhereBecomesPythonpathAndLocalKernelsAreRefused) {
  auto launch = add_launch("*fp32", true, true);
  launch.import_root = std::filesystem::path("/work/repo/src");
  auto local = add_launch("*fp32", true, true);
  local.qualname = "test_it.<locals>.add";
  const auto summary = build_captured_kernels({launch, local}, "/work/repo/ci");
  ASSERT_EQ(summary.kernels.size(), 1u);
  EXPECT_EQ(summary.kernels.front().python_path, (std::vector<std::string>{"../src"}));
  ASSERT_EQ(summary.warnings.size(), 1u);
  EXPECT_NE(summary.warnings.front().find("move it to module level"), std::string::npos);
}

TEST(CaptureRows, KernelsTheHookFoundNotImportableAreLeftOutWithTheReason) {
  auto generated = add_launch("*fp32", true, true);
  generated.not_importable = "its module _gen_module_1 is not importable";
  const auto summary = build_captured_kernels({generated}, "/work/repo");
  EXPECT_TRUE(summary.kernels.empty());
  ASSERT_EQ(summary.warnings.size(), 1u);
  EXPECT_NE(summary.warnings.front().find("_gen_module_1 is not importable"), std::string::npos);
}

TEST(CaptureRows, InstalledPackagesNeedNoPythonpathAndScriptsAreFiles) {
  auto installed = add_launch("*fp32", true, true);
  installed.import_root = std::filesystem::path("/venv/lib/python3.11/site-packages");
  auto script = add_launch("*fp32", true, true);
  script.module = "__main__";
  script.qualname = "copy";
  script.import_root.reset();
  script.file = "/work/repo/tools/bench.py";
  const auto summary = build_captured_kernels({installed, script}, "/work/repo");
  ASSERT_EQ(summary.kernels.size(), 2u);
  for (const auto& kernel : summary.kernels) {
    EXPECT_TRUE(kernel.python_path.empty());
    if (kernel.name == "copy") {
      EXPECT_EQ(kernel.target, "tools/bench.py:copy");
    }
  }
}

TEST(ManifestWriter, TomlValuesRoundTrip) {
  EXPECT_EQ(toml_value(1.0), "1.0");
  EXPECT_EQ(toml_value(1e-5), "1e-05");
  EXPECT_EQ(toml_value("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(toml_value(nlohmann::json::array({64, 64})), "[64, 64]");
  EXPECT_EQ(toml_value(nlohmann::json{{"none", true}}), "{ none = true }");
  EXPECT_EQ(toml_value(true), "true");
}

class MergeTest : public ::testing::Test {
 protected:
  util::TempDir dir{"portcheck-capture-test"};

  std::filesystem::path write(const std::string& text) {
    std::filesystem::create_directories(dir.path() / "pkg");
    std::ofstream(dir.path() / "pkg" / "__init__.py") << "";
    auto path = dir.path() / "portcheck.toml";
    std::ofstream(path) << text;
    return path;
  }

  std::vector<CapturedKernel> captured(const std::vector<CapturedLaunch>& launches) {
    auto copy = launches;
    for (auto& l : copy) l.import_root = dir.path();
    return build_captured_kernels(copy, dir.path()).kernels;
  }
};

TEST_F(MergeTest, RenderedManifestLoadsWithEveryRow) {
  const auto kernels =
      captured({add_launch("*fp32", true, true), add_launch("*fp16", true, false)});
  const auto result = render_captured_manifest(kernels, {"header"});
  const auto manifest = load_manifest(write(result.text));
  ASSERT_EQ(manifest.rows.size(), 2u);
  EXPECT_EQ(manifest.rows[0].display_name(), "add[fp16]");
  EXPECT_EQ(manifest.rows[0].signature["n"], "i32");
  EXPECT_EQ(manifest.rows[1].signature["x"], "*fp32:16");
  EXPECT_EQ(manifest.rows[1].constants["BLOCK"], 256);
  EXPECT_FALSE(manifest.rows[1].captured.empty());
  EXPECT_EQ(result.text.rfind("# header", 0), 0u);
}

// Autotune configs: one specialisation launched with several option sets.
std::vector<CapturedLaunch> launches_with_warps(const std::vector<int>& warps) {
  std::vector<CapturedLaunch> out;
  for (const int w : warps) {
    auto launch = add_launch("*fp32", true, true);
    launch.explicit_options = {{"num_warps", w}};
    out.push_back(launch);
  }
  return out;
}

// Hoisting everything the rows share would leave the [[kernel]] a complete specialisation, a
// row of its own that nobody launched: the rows keep their signature instead.
TEST_F(MergeTest, VariantsDifferingOnlyInOptionsAddNoRowOfTheirKernel) {
  const auto result = render_captured_manifest(captured(launches_with_warps({4, 8})), {});
  const auto manifest = load_manifest(write(result.text));
  ASSERT_EQ(manifest.rows.size(), 2u) << result.text;
  EXPECT_EQ(manifest.rows[0].display_name(), "add[num_warps=4]");
  EXPECT_EQ(manifest.rows[1].display_name(), "add[num_warps=8]");
  for (const auto& row : manifest.rows) {
    EXPECT_EQ(row.signature["x"], "*fp32:16");
    EXPECT_EQ(row.constants["BLOCK"], 256);
  }
  EXPECT_EQ(manifest.rows[0].options["num_warps"], 4);
  EXPECT_EQ(manifest.rows[1].options["num_warps"], 8);
  EXPECT_NE(result.text.find("constants = { BLOCK = 256 }\ncaptured"), std::string::npos)
      << result.text;  // what they do share still moves up
}

// What an older capture wrote for such rows: a complete [[kernel]], which is now a row. An
// --update writes the block anew without it, and does not count it as a launch replaced.
TEST_F(MergeTest, UpdateRewritesAnOlderBlockWhoseKernelWasComplete) {
  const std::string original =
      "[[kernel]]\n"
      "name      = \"add\"\n"
      "target    = \"pkg.kernels:add\"\n"
      "signature = { x = \"*fp32:16\", y = \"*fp32:16\", out = \"*fp32:16\", n = \"i32:16\" }\n"
      "constants = { BLOCK = 256 }\n"
      "captured  = \"pkg/kernels.py:7\"\n"
      "xfail     = [\"cuda:75\"]\n"
      "\n"
      "  [[kernel.variant]]\n"
      "  name      = \"num_warps=4\"\n"
      "  options   = { num_warps = 4 }\n"
      "  captured  = \"tests/test_add.py::test_add\"\n"
      "\n"
      "  [[kernel.variant]]\n"
      "  name      = \"num_warps=8\"\n"
      "  options   = { num_warps = 8 }\n"
      "  captured  = \"tests/test_add.py::test_add\"\n";
  const auto file = write(original);
  ASSERT_EQ(load_manifest(file).rows.size(), 3u);
  const auto result = merge_captured_manifest(file, original, captured(launches_with_warps({4, 8})),
                                              MergeMode::update);
  EXPECT_EQ(result.rows_replaced, 2);
  EXPECT_EQ(result.rows_written, 2);
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  const auto manifest = load_manifest(write(result.text));
  ASSERT_EQ(manifest.rows.size(), 2u) << result.text;
  EXPECT_EQ(manifest.rows[0].display_name(), "add[num_warps=4]");
  EXPECT_EQ(manifest.rows[1].xfail, (std::vector<std::string>{"cuda:75"}));  // carried over
}

TEST_F(MergeTest, UpdateReplacesCapturedBlocksAndKeepsTheRest) {
  const std::string original =
      "# my manifest\n"
      "[defaults]\n"
      "targets = [\"cuda:80\"]\n"
      "\n"
      "[[kernel]]\n"
      "name      = \"add\"\n"
      "target    = \"pkg.kernels:add\"\n"
      "signature = { x = \"*fp32:16\", y = \"*fp32:16\", out = \"*fp32:16\", n = \"i32\" }\n"
      "constants = { BLOCK = 64 }\n"
      "captured  = \"old\"\n"
      "xfail     = [\n"
      "  \"cuda:80\",  # see #3\n"
      "]\n"
      "\n"
      "# hand-written\n"
      "[[kernel]]\n"
      "name   = \"add_by_hand\"\n"
      "target = \"pkg.kernels:add\"\n"
      "signature = { x = \"*fp32:16\", y = \"*fp32:16\", out = \"*fp32:16\", n = \"i32:16\" }\n"
      "constants = { BLOCK = 256 }\n";
  const auto file = write(original);
  // The same launch as the hand-written row, and one new one.
  const auto kernels =
      captured({add_launch("*fp32", true, true), add_launch("*fp32", true, false, 64)});
  auto result = merge_captured_manifest(file, original, kernels, MergeMode::update);
  EXPECT_EQ(result.rows_replaced, 1);
  EXPECT_EQ(result.rows_existing, 1);
  EXPECT_EQ(result.rows_written, 1);
  EXPECT_NE(result.text.find("# my manifest\n[defaults]\ntargets = [\"cuda:80\"]\n"),
            std::string::npos);
  EXPECT_NE(result.text.find("# hand-written\n[[kernel]]\nname   = \"add_by_hand\""),
            std::string::npos);
  EXPECT_EQ(result.text.find("captured  = \"old\""), std::string::npos);
  const auto manifest = load_manifest(write(result.text));
  ASSERT_EQ(manifest.rows.size(), 2u);
  // A single remaining row keeps the kernel's name; its xfail lines (comment too) carry over.
  EXPECT_EQ(manifest.rows[0].display_name(), "add");
  EXPECT_EQ(manifest.rows[0].xfail, (std::vector<std::string>{"cuda:80"}));
  EXPECT_NE(result.text.find("\"cuda:80\",  # see #3"), std::string::npos);
  EXPECT_EQ(manifest.rows[1].display_name(), "add_by_hand");
}

TEST_F(MergeTest, UpdateReportsAnnotationsOfRowsNotCapturedAgainAndKeepsCrlf) {
  const std::string original =
      "# Captured by `triton-portcheck capture --mode interpret` from: pytest old\r\n"
      "[[kernel]]\r\n"
      "name      = \"add\"\r\n"
      "target    = \"pkg.kernels:add\"\r\n"
      "signature = { x = \"*fp16:16\", y = \"*fp16:16\", out = \"*fp16:16\", n = \"i32:16\" }\r\n"
      "constants = { BLOCK = 256 }\r\n"
      "captured  = \"old\"\r\n"
      "xfail     = [\"cuda:75\"]  # fp16 on Turing\r\n";
  const auto file = write(original);
  const auto kernels = captured({add_launch("*fp32", true, true)});
  const auto result = merge_captured_manifest(
      file, original, kernels, MergeMode::update,
      {"Captured by `triton-portcheck capture --mode interpret` from: pytest new"});
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings.front().find("add was captured before but not in this run"),
            std::string::npos);
  EXPECT_NE(result.warnings.front().find("xfail     = [\"cuda:75\"]  # fp16 on Turing"),
            std::string::npos);
  EXPECT_EQ(result.text.rfind("# Captured by `triton-portcheck capture --mode interpret` from: "
                              "pytest new\r\n",
                              0),
            0u);
  EXPECT_EQ(result.text.find('\n', 0) - 1, result.text.find("\r\n", 0));
  EXPECT_EQ(result.text.find("xfail"), std::string::npos);
  EXPECT_EQ(load_manifest(write(result.text)).rows.size(), 1u);
}

TEST_F(MergeTest, AppendNeverRemovesAndRenamesClashingKernels) {
  const std::string original =
      "[[kernel]]\n"
      "name      = \"add\"\n"
      "target    = \"pkg.kernels:add\"\n"
      "signature = { x = \"*fp16:16\", y = \"*fp16:16\", out = \"*fp16:16\", n = \"i32:16\" }\n"
      "constants = { BLOCK = 256 }\n"
      "captured  = \"earlier\"\n";
  const auto file = write(original);
  const auto kernels = captured({add_launch("*fp32", true, true)});
  const auto result = merge_captured_manifest(file, original, kernels, MergeMode::append);
  EXPECT_EQ(result.text.rfind(original, 0), 0u);
  const auto manifest = load_manifest(write(result.text));
  ASSERT_EQ(manifest.rows.size(), 2u);
  EXPECT_EQ(manifest.rows[1].display_name(), "add_2");
}

}  // namespace

TEST(CaptureRows, TheConfigsOfAnAutotunedLaunchShareItsNameAndALaunchSeenTwiceIsOne) {
  std::vector<CapturedLaunch> launches;
  for (int block : {128, 64, 32}) {
    launches.push_back(add_launch("*fp32", true, true, block));
    launches.back().identity = fmt::format("id{}", block);
  }
  const std::vector<CapturedAutotunedLaunch> autotuned = {
      {{"id128", "id64"}, "cuda:90"},
      {{"id64", "id128"}, "cuda:90"},          // the same launch, from another process
      {{"id32", "id64", "id128"}, "cuda:90"},  // another key: one more config
      {{"id32", "unknown"}, "cuda:90"},        // a config whose record was lost: left out
  };
  const auto summary = build_captured_kernels(launches, "/work/repo", autotuned);
  ASSERT_EQ(summary.kernels.size(), 1u);
  std::map<std::string, std::vector<std::string>> launches_of;
  for (const auto& row : summary.kernels.front().rows) launches_of[row.variant] = row.autotune;
  // Named after their first row in the kernel's order (BLOCK=32 first).
  EXPECT_EQ(launches_of, (std::map<std::string, std::vector<std::string>>{
                             {"BLOCK=32", {"launch-1"}},
                             {"BLOCK=64", {"launch-1", "launch-2"}},
                             {"BLOCK=128", {"launch-1", "launch-2"}}}));
  const auto text = render_captured_manifest(summary.kernels, {}).text;
  EXPECT_NE(text.find("autotune  = \"launch-1\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("autotune  = [\"launch-1\", \"launch-2\"]\n"), std::string::npos) << text;
}

}  // namespace portcheck
