#include "src/report/sarif.hpp"

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "tests/unit/report_fixtures.hpp"

namespace portcheck {
namespace {

// Runs a test body with the current folder set to `dir`, restoring it afterwards.
class ScopedCwd {
 public:
  explicit ScopedCwd(const std::filesystem::path& dir) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~ScopedCwd() { std::filesystem::current_path(old_); }
  ScopedCwd(const ScopedCwd&) = delete;
  ScopedCwd& operator=(const ScopedCwd&) = delete;

 private:
  std::filesystem::path old_;
};

const std::filesystem::path kRoot = "/tmp/portcheck-sarif-test-root";

using test_support::cell;

// Rows: axpy (ok everywhere), gamma_ratio (frontend error on HIP, located at the failing line),
// dot_small[int8] (MLIR error with only the def known; an xfail sharing its fingerprint; an
// xpass), scatter_rows (assembler error with no location of its own; its ok cell knows the def),
// broken (import error with nothing but the manifest), and an internal error.
Report sample_report() {
  auto r = test_support::sample_report();
  test_support::on_ci_runner(r);
  r.manifest = (kRoot / "portcheck.toml").string();
  const auto kernels = (kRoot / "demo/kernels.py").string();
  auto& gamma = test_support::cell_at(r, "gamma_ratio", "hip:gfx942");
  gamma.link = "https://github.com/triton-lang/triton/issues/10375";
  gamma.error_source = SourceLocation{kernels, 32};
  gamma.kernel_source = SourceLocation{kernels, 28};
  auto& mlir = test_support::cell_at(r, "dot_small[int8]", "cuda:80");
  mlir.kernel_source = SourceLocation{kernels, 90};
  auto& expected = test_support::cell_at(r, "dot_small[int8]", "cuda:90");
  expected.pass = mlir.pass;  // the same failure as mlir's, as its fingerprint says
  expected.kernel_source = mlir.kernel_source;

  r.rows.insert(r.rows.end(), {"scatter_rows", "broken", "weird"});
  auto scatter_ok = cell("scatter_rows", "cuda:80");
  scatter_ok.kernel_source = SourceLocation{kernels, 70};
  r.cells.push_back(scatter_ok);
  r.cells.push_back(cell("scatter_rows", "cuda:90", FailureKind::assembler_error, "cccccccccccc",
                         "ptxas: Feature '.tile::scatter4' not supported on .target 'sm_90a'",
                         "cubin"));
  r.cells.push_back(cell("scatter_rows", "hip:gfx942"));

  for (const auto& t : r.targets)
    r.cells.push_back(cell("broken", t, FailureKind::import_error, "dddddddddddd",
                           "ModuleNotFoundError: No module named 'mypkg'", "import"));

  // Outside the current folder, with characters a URI must encode.
  auto weird = cell("weird", "cuda:80", FailureKind::llvm_error, "eeeeeeeeeeee",
                    "LLVM ERROR: \xff bad", "llir");
  weird.error_source = SourceLocation{"/elsewhere/my kernels#1.py", 7};
  r.cells.push_back(weird);
  r.cells.push_back(cell("weird", "cuda:90", FailureKind::internal_error, "ffffffffffff",
                         "KeyError: 'metadata'", "ttir"));
  r.cells.push_back(cell("weird", "hip:gfx942"));
  return r;
}

nlohmann::json render_in_root(const Report& r) {
  std::filesystem::create_directories(kRoot);
  ScopedCwd cwd(kRoot);
  return render_sarif(r);
}

const nlohmann::json& result_at(const nlohmann::json& results, const std::string& row,
                                const std::string& target) {
  for (const auto& res : results)
    if (res["properties"]["row"] == row && res["properties"]["target"] == target) return res;
  static const nlohmann::json none;
  ADD_FAILURE() << "no result for " << row << " on " << target;
  return none;
}

TEST(SarifReport, Envelope) {
  const auto sarif = render_in_root(sample_report());
  EXPECT_EQ(sarif["version"], "2.1.0");
  EXPECT_EQ(sarif["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
  ASSERT_EQ(sarif["runs"].size(), 1u);
  const auto& driver = sarif["runs"][0]["tool"]["driver"];
  EXPECT_EQ(driver["name"], "triton-portcheck");
  EXPECT_EQ(driver["version"], "0.1.0");
  // Always writable, whatever bytes the compiler printed.
  EXPECT_NO_THROW((void)sarif.dump());
}

TEST(SarifReport, RunDescriptionSaysWhatAPassingCellProves) {
  const auto sarif = render_in_root(sample_report());
  EXPECT_EQ(sarif["runs"][0]["automationDetails"]["description"]["text"], kCompileOnlyDisclaimer);
}

TEST(SarifReport, OneRulePerFingerprintInGroupOrder) {
  const auto sarif = render_in_root(sample_report());
  const auto& rules = sarif["runs"][0]["tool"]["driver"]["rules"];
  // The internal error is no rule: it is not the kernel's failure.
  ASSERT_EQ(rules.size(), 5u);
  std::vector<std::string> ids;
  for (const auto& rule : rules) ids.push_back(rule["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"portcheck/aaaaaaaaaaaa", "portcheck/bbbbbbbbbbbb",
                                           "portcheck/cccccccccccc", "portcheck/dddddddddddd",
                                           "portcheck/eeeeeeeeeeee"}));
  const auto& gamma = rules[0];
  EXPECT_EQ(gamma["name"], "frontend-error-in-frontend");
  EXPECT_EQ(gamma["shortDescription"]["text"],
            "frontend-error in stage frontend: AttributeError: module "
            "'triton.language.extra.hip.libdevice' has "
            "no attribute 'tgamma'");
  EXPECT_NE(
      gamma["fullDescription"]["text"].get<std::string>().find("HIP's libdevice has no tgamma."),
      std::string::npos);
  EXPECT_EQ(gamma["helpUri"], "https://github.com/triton-lang/triton/issues/10375");
  EXPECT_EQ(gamma["properties"]["kind"], "frontend-error");
  EXPECT_EQ(gamma["properties"]["stage"], "frontend");
  EXPECT_EQ(gamma["properties"]["group"], "A");
  const auto& mlir = rules[1];
  EXPECT_EQ(mlir["properties"]["pass"], "TritonGPUAccelerateMatmul");
  EXPECT_EQ(mlir["shortDescription"]["text"],
            "mlir-error in pass TritonGPUAccelerateMatmul (stage ttgir): 'arith.extf' op operand "
            "#0 must be "
            "floating-point-like");
  EXPECT_FALSE(mlir.contains("helpUri"));  // no link known
}

TEST(SarifReport, OneResultPerFailingCell) {
  const auto sarif = render_in_root(sample_report());
  const auto& run = sarif["runs"][0];
  const auto& results = run["results"];
  // 1 gamma + 2 dot_small (failed + xfail) + 1 scatter + 3 broken + 1 weird; not the internal
  // error.
  ASSERT_EQ(results.size(), 8u);
  std::set<std::pair<std::string, std::string>> cells;
  const auto& rules = run["tool"]["driver"]["rules"];
  for (const auto& res : results) {
    cells.insert({res["properties"]["row"].get<std::string>(),
                  res["properties"]["target"].get<std::string>()});
    const auto index = res["ruleIndex"].get<std::size_t>();
    ASSERT_LT(index, rules.size());
    EXPECT_EQ(rules[index]["id"], res["ruleId"]);
    EXPECT_EQ(res["ruleId"], "portcheck/" + res["properties"]["fingerprint"].get<std::string>());
  }
  EXPECT_EQ(cells.size(), results.size());

  const auto& gamma = result_at(results, "gamma_ratio", "hip:gfx942");
  EXPECT_EQ(gamma["level"], "error");
  EXPECT_EQ(gamma["message"]["text"],
            "gamma_ratio on hip:gfx942 (Triton 3.9.0): frontend-error in stage frontend: "
            "AttributeError: module "
            "'triton.language.extra.hip.libdevice' has no attribute 'tgamma'");
  EXPECT_EQ(gamma["partialFingerprints"]["portcheckFingerprint/v1"],
            "aaaaaaaaaaaa|gamma_ratio|hip:gfx942|current");
  EXPECT_EQ(gamma["properties"]["triton_version"], "3.9.0");
  EXPECT_EQ(gamma["properties"]["kind"], "frontend-error");
  EXPECT_EQ(gamma["properties"]["stage"], "frontend");
  EXPECT_FALSE(gamma.contains("suppressions"));
  EXPECT_FALSE(gamma.contains("baselineState"));  // no baseline applied

  // Same fingerprint, different cell: different partial fingerprints.
  const auto& broken80 = result_at(results, "broken", "cuda:80");
  const auto& broken90 = result_at(results, "broken", "cuda:90");
  EXPECT_NE(broken80["partialFingerprints"], broken90["partialFingerprints"]);
  EXPECT_EQ(broken80["ruleId"], broken90["ruleId"]);
}

TEST(SarifReport, ExpectedFailureIsSuppressedNote) {
  const auto sarif = render_in_root(sample_report());
  const auto& results = sarif["runs"][0]["results"];
  const auto& xfail = result_at(results, "dot_small[int8]", "cuda:90");
  EXPECT_EQ(xfail["level"], "note");
  ASSERT_EQ(xfail["suppressions"].size(), 1u);
  EXPECT_EQ(xfail["suppressions"][0]["kind"], "external");
  EXPECT_EQ(xfail["properties"]["status"], "xfail");
  const auto& failed = result_at(results, "dot_small[int8]", "cuda:80");
  EXPECT_EQ(failed["level"], "error");
  EXPECT_EQ(failed["ruleIndex"], xfail["ruleIndex"]);
  for (const auto& res : results) EXPECT_NE(res["properties"]["status"], "xpass");
}

TEST(SarifReport, Locations) {
  const auto sarif = render_in_root(sample_report());
  const auto& run = sarif["runs"][0];
  const auto& results = run["results"];
  const auto physical = [&](const std::string& row, const std::string& target) {
    const auto& res = result_at(results, row, target);
    EXPECT_EQ(res["locations"].size(), 1u) << row << " " << target;
    return res["locations"][0]["physicalLocation"];
  };
  // The line the compiler blamed, relative to the current folder.
  auto loc = physical("gamma_ratio", "hip:gfx942");
  EXPECT_EQ(loc["artifactLocation"]["uri"], "demo/kernels.py");
  EXPECT_EQ(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ(loc["region"]["startLine"], 32);
  // Only the def known.
  loc = physical("dot_small[int8]", "cuda:80");
  EXPECT_EQ(loc["region"]["startLine"], 90);
  // Nothing known for the cell: the def another cell of the row recorded.
  loc = physical("scatter_rows", "cuda:90");
  EXPECT_EQ(loc["artifactLocation"]["uri"], "demo/kernels.py");
  EXPECT_EQ(loc["region"]["startLine"], 70);
  // Nothing known for the row: the manifest, without a region.
  loc = physical("broken", "cuda:80");
  EXPECT_EQ(loc["artifactLocation"]["uri"], "portcheck.toml");
  EXPECT_FALSE(loc.contains("region"));
  // Outside the current folder: an absolute, percent-encoded file URI with no base.
  loc = physical("weird", "cuda:80");
  EXPECT_EQ(loc["artifactLocation"]["uri"], "file:///elsewhere/my%20kernels%231.py");
  EXPECT_FALSE(loc["artifactLocation"].contains("uriBaseId"));
  EXPECT_EQ(loc["region"]["startLine"], 7);

  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file://" + kRoot.string() + "/");
}

TEST(SarifReport, NoLocationWhenNothingIsKnown) {
  auto r = sample_report();
  r.manifest = "--demo";
  r.environment["options"] = {{"manifest", "--demo"}};
  const auto sarif = render_in_root(r);
  const auto& res = result_at(sarif["runs"][0]["results"], "broken", "cuda:80");
  EXPECT_FALSE(res.contains("locations"));
}

TEST(SarifReport, InternalErrorIsAToolNotification) {
  const auto sarif = render_in_root(sample_report());
  const auto& run = sarif["runs"][0];
  const auto& invocation = run["invocations"][0];
  EXPECT_FALSE(invocation["executionSuccessful"].get<bool>());
  ASSERT_EQ(invocation["toolExecutionNotifications"].size(), 1u);
  const auto& note = invocation["toolExecutionNotifications"][0];
  EXPECT_EQ(note["level"], "error");
  EXPECT_EQ(note["properties"]["row"], "weird");
  EXPECT_EQ(note["properties"]["target"], "cuda:90");
  EXPECT_NE(note["message"]["text"].get<std::string>().find("KeyError: 'metadata'"),
            std::string::npos);

  auto clean = sample_report();
  std::erase_if(clean.cells,
                [](const CellResult& c) { return c.kind == FailureKind::internal_error; });
  const auto ok = render_in_root(clean);
  EXPECT_TRUE(ok["runs"][0]["invocations"][0]["executionSuccessful"].get<bool>());
  EXPECT_FALSE(ok["runs"][0]["invocations"][0].contains("toolExecutionNotifications"));
}

TEST(SarifReport, InternalErrorFirstInItsGroupStillLeavesTheRuleToTheOthers) {
  auto r = sample_report();
  for (auto& c : r.cells)
    if (c.kernel == "scatter_rows" && c.target == "cuda:80") {
      c = cell("scatter_rows", "cuda:80", FailureKind::internal_error, "cccccccccccc", "KeyError",
               "ttir");
    }
  const auto sarif = render_in_root(r);
  const auto& run = sarif["runs"][0];
  const auto& res = result_at(run["results"], "scatter_rows", "cuda:90");
  EXPECT_EQ(res["ruleId"], "portcheck/cccccccccccc");
  const auto& rule = run["tool"]["driver"]["rules"][res["ruleIndex"].get<std::size_t>()];
  EXPECT_EQ(rule["properties"]["kind"], "assembler-error");
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"].size(), 2u);
}

TEST(SarifReport, InvalidUtf8IsReplaced) {
  const auto sarif = render_in_root(sample_report());
  const auto& res = result_at(sarif["runs"][0]["results"], "weird", "cuda:80");
  EXPECT_NE(res["message"]["text"].get<std::string>().find("LLVM ERROR: \xEF\xBF\xBD bad"),
            std::string::npos);
}

TEST(SarifReport, BaselineStates) {
  auto r = sample_report();
  r.baseline.applied = true;
  r.baseline.origin = "baseline.json";
  for (auto& c : r.cells)
    if (c.kernel == "broken") {
      c.in_baseline = true;
      c.is_new = false;
    }
  const auto sarif = render_in_root(r);
  const auto& results = sarif["runs"][0]["results"];
  EXPECT_EQ(result_at(results, "broken", "cuda:80")["baselineState"], "unchanged");
  EXPECT_EQ(result_at(results, "broken", "cuda:80")["level"], "warning");
  EXPECT_EQ(result_at(results, "gamma_ratio", "hip:gfx942")["baselineState"], "new");
  EXPECT_EQ(result_at(results, "gamma_ratio", "hip:gfx942")["level"], "error");
  EXPECT_FALSE(
      result_at(results, "dot_small[int8]", "cuda:90").contains("baselineState"));  // xfail
}

TEST(SarifReport, NoFailuresNoResults) {
  Report r;
  r.tool_version = "0.1.0";
  r.targets = {"cuda:80"};
  r.rows = {"axpy"};
  r.cells.push_back(cell("axpy", "cuda:80"));
  const auto sarif = render_in_root(r);
  EXPECT_TRUE(sarif["runs"][0]["results"].empty());
  EXPECT_TRUE(sarif["runs"][0]["tool"]["driver"]["rules"].empty());
  EXPECT_FALSE(sarif["runs"][0].contains("originalUriBaseIds"));
}

}  // namespace
}  // namespace portcheck
