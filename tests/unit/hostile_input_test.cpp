// Issue 14 item 4: input built to break the parsers (names of 60,000 characters, nesting 100,000
// deep, numbers past double's range, values of the wrong type) is one exit-2 line naming the
// file and the key, never a stack overflow or an internal error.
#include <fstream>

#include <gtest/gtest.h>

#include "src/capture/manifest_writer.hpp"
#include "src/check/classify.hpp"
#include "src/core/errors.hpp"
#include "src/core/ir_text.hpp"
#include "src/core/manifest.hpp"
#include "src/export/export.hpp"
#include "src/report/baseline.hpp"
#include "src/report/json.hpp"
#include "tests/unit/report_fixtures.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

constexpr std::size_t kDeep = 100000;

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

class HostileInput : public ::testing::Test {
 protected:
  util::TempDir dir{"portcheck-hostile-input-test"};

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir.path() / name;
    std::ofstream(path) << text;
    return path;
  }

  // The UsageError `load` throws, or a test failure when it throws nothing.
  template <typename Load>
  std::string usage_error(Load load) {
    try {
      load();
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no UsageError";
    return {};
  }

  std::string manifest_error(const std::string& text) {
    std::ofstream(dir.path() / "kernels.py") << "# kernels\n";
    const auto file = write("portcheck.toml", text);
    return usage_error([&] { load_manifest(file); });
  }

  // A report of one failing cell as `check --json` writes it, changed by `edit`.
  template <typename Edit>
  std::filesystem::path report_file(Edit edit) {
    Report report;
    report.tool_version = "0.2.0";
    report.targets = {"cuda:90"};
    report.rows = {"dot_small[int8]"};
    report.environment = {{"triton", {{"version", "3.9.0"}}}, {"python", {{"version", "3.11"}}}};
    auto cell = test_support::extf_failure("cuda:90");
    cell.launch = {{"problems", nlohmann::json::array({"too much shared memory"})}};
    report.cells.push_back(cell);
    auto json = report_to_json(report);
    edit(json);
    return write("report.json", json.dump());
  }
};

TEST_F(HostileInput, KernelNameOf60000CharactersIsRefusedNotACrash) {
  const auto error = manifest_error("[[kernel]]\nname = \"" + std::string(60000, 'k') +
                                    "\"\ntarget = \"kernels.py:f\"\n");
  EXPECT_NE(error.find("kernel.name"), std::string::npos) << error;
  EXPECT_NE(error.find("longer than"), std::string::npos) << error;
  EXPECT_LT(error.size(), 400U) << "the name is not echoed whole";
}

TEST_F(HostileInput, FunctionAndModuleNamesOf60000CharactersAreNotACrash) {
  const std::string name(60000, 'f');
  const auto manifest =
      write("long.toml", "[[kernel]]\nname = \"a\"\ntarget = \"" + name + ":" + name + "\"\n");
  EXPECT_EQ(load_manifest(manifest).rows.at(0).ref.function, name);
  const auto error = manifest_error("[[kernel]]\nname = \"a\"\ntarget = \"mod:" + name + "-\"\n");
  EXPECT_NE(error.find("not a Python function name"), std::string::npos) << error;
  EXPECT_LT(error.size(), 400U);
}

TEST_F(HostileInput, SpecializationNested100000DeepIsOneLine) {
  const auto error = manifest_error(
      "[[kernel]]\nname = \"a\"\ntarget = \"kernels.py:f\"\n"
      "specialization = '" +
      nested_arrays(kDeep) + "'\n");
  EXPECT_NE(error.find("portcheck.toml:4: kernel 'a'.specialization"), std::string::npos) << error;
  EXPECT_NE(error.find("nested deeper than"), std::string::npos) << error;
}

TEST_F(HostileInput, OptionsTableNested100000DeepIsOneLine) {
  std::string key = "options";
  for (std::size_t i = 0; i < kDeep; ++i) key += ".a";
  const auto error =
      manifest_error("[[kernel]]\nname = \"a\"\ntarget = \"kernels.py:f\"\n" + key + " = 1\n");
  EXPECT_NE(error.find("nested deeper than"), std::string::npos) << error;
  EXPECT_LT(error.size(), 400U);
}

TEST_F(HostileInput, ReportEnvironmentNested100000DeepIsOneLine) {
  const auto file = write("deep.json", R"({"schema_version": 1, "environment": )" +
                                           nested_arrays(kDeep) + R"(, "cells": []})");
  const auto error = usage_error([&] { load_report(file); });
  EXPECT_NE(error.find("deep.json: line 1, column"), std::string::npos) << error;
  EXPECT_NE(error.find("nested deeper than 512 levels (at environment"), std::string::npos)
      << error;
}

TEST_F(HostileInput, CellMetadataNested100000DeepIsOneLineForReportsAndBaselines) {
  std::string text;
  const auto file = report_file([&](nlohmann::json& j) { j["cells"][0]["metadata"] = "@"; });
  text = util::read_file(file);
  const auto at = text.find("\"@\"");
  text.replace(at, 3, nested_arrays(kDeep));
  const auto deep = write("deep.json", text);
  EXPECT_NE(usage_error([&] { load_report(deep); }).find("(at cells[0].metadata"),
            std::string::npos);
  const auto error = usage_error([&] { load_baseline(deep); });
  EXPECT_NE(error.find("deep.json"), std::string::npos) << error;
  EXPECT_NE(error.find("nested deeper than"), std::string::npos) << error;
}

TEST_F(HostileInput, NumberPastDoublesRangeNamesLineAndKey) {
  auto text = util::read_file(report_file([](nlohmann::json& j) { j["wall_s"] = 7; }));
  text.replace(text.find("\"wall_s\":7"), 10, "\"wall_s\":1e400");
  const auto file = write("big.json", text);
  const auto error = usage_error([&] { load_report(file); });
  EXPECT_NE(error.find("big.json: line 1"), std::string::npos) << error;
  EXPECT_NE(error.find("1e400"), std::string::npos) << error;
  EXPECT_NE(error.find("(at wall_s)"), std::string::npos) << error;
}

TEST_F(HostileInput, LaunchProblemsNotAListNamesTheKeyPath) {
  const auto file =
      report_file([](nlohmann::json& j) { j["cells"][0]["launch"]["problems"] = false; });
  EXPECT_EQ(
      usage_error([&] { load_report(file); }),
      file.string() + ": cells[0].launch.problems: expected an array of strings, found boolean");
}

TEST_F(HostileInput, WrongTypesNameTheKeyPath) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"/cells/0/message", 5},
      {"/cells/0/kernel", nullptr},
      {"/cells/0/compile_s", "x"},
      {"/cells/0/source", {{"file", "k.py"}, {"line", 1e10}}},
      {"/environment/triton", "3.9.0"},
      {"/environment/tritons", {{{"version", 3}}}},
      {"/targets", {1}},
      {"/shard", {{"index", "1"}, {"count", 2}}},
      {"/baseline/fixed/0", {{"row", 1}}},
      {"/cells/0/launch", "big"},
  };
  const std::vector<std::string> paths = {
      "cells[0].message: expected a string, found number",
      "cells[0].kernel: missing",
      "cells[0].compile_s: expected a number, found string",
      "cells[0].source.line: expected an integer",
      "environment.triton: expected an object, found string",
      "environment.tritons[0].version: expected a string, found number",
      "targets[0]: expected a string, found number",
      "shard.index: expected an integer",
      "baseline.fixed[0].row: expected a string, found number",
      "cells[0].launch: expected an object, found string",
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto file = report_file([&](nlohmann::json& j) {
      if (cases[i].first.starts_with("/baseline")) j["baseline"] = {{"fixed", {{}}}};
      j[nlohmann::json::json_pointer(cases[i].first)] = cases[i].second;
    });
    const auto error = usage_error([&] { load_report(file); });
    EXPECT_EQ(error.rfind(file.string() + ": " + paths[i], 0), 0U) << error;
  }
}

TEST_F(HostileInput, BaselineEntryOfTheWrongTypeNamesTheKeyPath) {
  const auto file = write("base.json", R"({"baseline_version": 1, "failures": [
    {"row": "a", "target": "cuda:90", "message": "m"},
    {"row": "a", "target": "cuda:80", "message": false}]})");
  EXPECT_EQ(
      usage_error([&] { load_baseline(file); }),
      "--baseline " + file.string() + ": failures[1].message: expected a string, found boolean");
}

// Compiler output the kernel controls (its own exception text, printed lines): 100,000-character
// lines through every classifier, which std::regex walked recursively off the stack.
CellEvidence failed_in(const std::string& stage, const std::string& message,
                       const std::string& stderr_text) {
  CellEvidence e;
  e.outcome.how = Termination::exited;
  e.last_stage = stage;
  e.stderr_text = stderr_text;
  e.result = CellAnswer{};
  e.result->stage = stage;
  e.result->error = FailureError{"RuntimeError", message, ""};
  return e;
}

TEST(HostileCompilerOutput, LongLinesInEveryClassifierAreNotACrash) {
  const std::string run(100000, 'x');
  const std::string blanks(100000, ' ');
  auto c = classify(failed_in("frontend", "ValueError(\"" + run + "\")", ""));
  EXPECT_EQ(c.message, "ValueError: " + run);
  c = classify(
      failed_in("ttgir", "PassManager::run failed",
                "Pipeline failed while executing [`" + run + "`\nk.py:3:4: error: " + run));
  EXPECT_EQ(c.pass, run);
  EXPECT_EQ(c.message, run);
  ASSERT_TRUE(c.error_source);
  EXPECT_EQ(c.error_source->line, 3);
  c = classify(failed_in("ttgir", "PassManager::run failed", "loc(" + run + "): error: bad"));
  EXPECT_EQ(c.message, "bad");
  c = classify(failed_in("cubin", "ptxas failed",
                         "ptxas /tmp/" + run + ".ptx, line 9; error" + blanks + ": " + run));
  EXPECT_EQ(c.message, "ptxas: " + run);
  c = classify(failed_in("llir", "failed", "LLVM ERROR: " + run));
  EXPECT_EQ(c.message.size(), run.size() + 12);
  CellEvidence crash;
  crash.outcome.how = Termination::signaled;
  crash.outcome.signal = SIGSEGV;
  crash.last_stage = "llir";
  crash.stderr_text = "Assertion `" + run + "` failed.";
  EXPECT_EQ(classify(crash).kind, FailureKind::crash);
}

TEST(HostileCompilerOutput, LongRunsInMessagesAndPathsAreNotACrash) {
  for (const auto& text :
       {std::string(100000, ' '), "0x" + std::string(100000, 'a'), std::string(100000, '7'),
        "loc(" + std::string(100000, 'a') + ")", "<{" + std::string(100000, 'a') + "}>"})
    EXPECT_FALSE(fingerprint(FailureKind::mlir_error, "ttgir", "", text).empty());
  std::string path;
  for (int i = 0; i < 20000; ++i) path += "/abcd";
  EXPECT_EQ(normalize_paths(path + " x", PathSyntax::ir), "<path>/abcd x");
  EXPECT_EQ(normalize_paths("/a/" + std::string(100000, 'b'), PathSyntax::message),
            "<path>/" + std::string(100000, 'b'));
  EXPECT_EQ(normalize_paths("at /tmp/tmpab3x_9z.ptx.bak:", PathSyntax::message),
            "at <tmpfile>.bak:");
}

// Found by fuzz/fuzz_toml_writer: a specialisation holding DEL (which JSON leaves unescaped) was
// written as a TOML literal string, which cannot hold it, so the captured manifest did not load.
TEST_F(HostileInput, CapturedSpecializationWithAControlCharacterLoadsBack) {
  CapturedKernel kernel;
  kernel.name = "k";
  kernel.target = "kernels:f";
  CapturedRow row;
  // The shape serialize_specialization_data writes (the manifest refuses any other), with a DEL
  // in a constant: TOML forbids DEL in a literal string, so the writer must escape it.
  row.specialization =
      nlohmann::json{
          {"signature", {{"c", "constexpr"}}},       {"constant_keys", {{0}}},
          {"constant_vals", {std::string("a\x7f")}}, {"attrs_keys", nlohmann::json::array()},
          {"attrs_vals", nlohmann::json::array()},   {"options", nlohmann::json::object()}}
          .dump();
  kernel.rows.push_back(row);
  const auto file = write("captured.toml", render_captured_manifest({kernel}, {}).text);
  const auto manifest = load_manifest(file);
  ASSERT_EQ(manifest.rows.size(), 1U);
  EXPECT_EQ(manifest.rows[0].specialization, row.specialization);
}

// std::regex recursed once per character on these (SIGSEGV past some 100,000): the key check of
// the TOML writer, the table-header scan of `capture --update`/append over the user's manifest,
// export's `.entry NAME (` scan of the PTX.
constexpr std::size_t kLong = 200000;

TEST_F(HostileInput, CapturedArgumentNameOf200000CharactersIsNotACrash) {
  CapturedKernel kernel;
  kernel.name = "k";
  kernel.target = "kernels:f";
  CapturedRow row;
  row.signature = {{std::string(kLong, 'a'), "i32"}, {std::string(kLong, '.'), "i32"}};
  kernel.rows.push_back(row);
  const auto text = render_captured_manifest({kernel}, {}).text;
  EXPECT_NE(text.find("{ " + std::string(kLong, 'a') + " = \"i32\", \"" + std::string(kLong, '.') +
                      "\" = \"i32\" }"),
            std::string::npos);
}

TEST_F(HostileInput, ManifestLinesOf200000CharactersAreNotACrashOnUpdate) {
  const std::string comment = "# " + std::string(kLong, 'c');
  const std::string original = std::string(kLong, ' ') + "\n[[kernel]]  " + comment +
                               "\nname = \"old\"\ntarget = \"kernels:f\"\ncaptured = \"t\"\n"
                               "[[ kernel . variant ]] " +
                               comment + "\nname = \"v\"\n[defaults]  " + comment + "\n";
  std::ofstream(dir.path() / "kernels.py") << "# kernels\n";
  const auto file = write("portcheck.toml", original);
  CapturedKernel kernel;
  kernel.name = "new";
  kernel.target = "kernels:g";
  kernel.rows.emplace_back();
  const auto result = merge_captured_manifest(file, original, {kernel}, MergeMode::update);
  EXPECT_EQ(result.rows_written, 1);
  // The [[kernel]] block ran to [defaults] (a variant header does not end it) and was kept:
  // `update` replaces only the rows of kernels captured now.
  EXPECT_EQ(result.rows_replaced, 0);
  EXPECT_NE(result.text.find("[[ kernel . variant ]] " + comment + "\nname = \"v\"\n[defaults]"),
            std::string::npos);
}

TEST(HostilePtx, EntryWithAParameterListOf200000CharactersIsNotACrash) {
  std::string params;
  for (int i = 0; i < 12000; ++i) params += ".param .u64 p" + std::to_string(i) + ",\n";
  params.resize(params.size() - 2);
  const std::string ptx = ".visible .entry k(\n" + params + "\n)\n{\n}\n";
  ASSERT_GT(ptx.size(), kLong);
  EXPECT_EQ(ptx_parameter_count(ptx, "k"), 12000U);
  EXPECT_EQ(ptx_parameter_count(".entry k" + std::string(kLong, ' ') + "(.param .u32 a)", "k"), 1U);
  EXPECT_EQ(ptx_parameter_count(".entry k(" + std::string(kLong, 'x'), "k"), std::nullopt);
}

}  // namespace
}  // namespace portcheck
