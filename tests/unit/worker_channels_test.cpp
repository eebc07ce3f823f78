// The tool's side of the channels outside the JSON messages, held to the "x-channels" section of
// protocol.schema.json (the worker's side: tests/integration/test_protocol_schema.py): its names
// for them, and its readers of the progress file and the batch log on the section's examples.
#include "src/run/worker_channels.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/check/classify.hpp"
#include "src/run/batch_log.hpp"
#include "src/run/cell_parent.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

const nlohmann::json& section() { return worker_protocol_schema().document().at("x-channels"); }

TEST(WorkerChannels, TheToolsNamesAreTheSchemas) {
  const auto& s = section();
  EXPECT_EQ(s.at("command_line").at("module"), channels::kWorkerModule);
  std::set<std::string> commands;
  for (const auto& [name, _] : s.at("command_line").at("commands").items()) commands.insert(name);
  EXPECT_EQ(commands, (std::set<std::string>{std::string(channels::kProbeCommand),
                                             std::string(channels::kCellCommand),
                                             std::string(channels::kServeCommand)}));
  const auto& codes = s.at("exit_codes");
  EXPECT_EQ(codes.at("usage").at("code"), channels::kExitUsage);
  EXPECT_EQ(codes.at("environment").at("code"), channels::kExitEnvironment);
  EXPECT_EQ(codes.at("bug").at("code"), channels::kExitBug);
  // Every variable the schema says the tool sets is one the tool names, and no other.
  std::set<std::string> set_by_tool;
  for (const auto& [name, entry] : s.at("environment").items())
    if (entry.at("from") == "tool") set_by_tool.insert(name);
  const std::set<std::string> named = {
      std::string(channels::kToolPid),        std::string(channels::kRunMarker),
      std::string(channels::kInheritSite),    std::string(channels::kServerGeneration),
      std::string(channels::kServerMaxRss),   std::string(channels::kServerJobs),
      std::string(channels::kCaptureDir),     std::string(channels::kCaptureMode),
      std::string(channels::kCaptureHookDir), std::string(channels::kCapturePersona),
      std::string(channels::kCaptureFakeGpu)};
  EXPECT_EQ(set_by_tool, named);
  for (const auto& name : set_by_tool)
    if (s.at("environment").at(name).at("to") == "capture hook")
      EXPECT_TRUE(name.starts_with(channels::kCapturePrefix)) << name;
  EXPECT_EQ(s.at("files").at("batch_stop").at("suffix"), channels::kBatchStopSuffix);
}

TEST(WorkerChannels, TheProgressFileIsReadAsTheSchemaSays) {
  const auto& progress = section().at("lines").at("progress");
  EXPECT_TRUE(
      progress.at("grammar").at("stage").get<std::string>().starts_with(channels::kStagePrefix));
  util::TempDir dir("portcheck-channels-test");
  const auto file = dir.path() / "progress";
  for (const auto& example : progress.at("examples")) {
    const auto line = example.at("line").get<std::string>();
    const auto& means = example.at("means");
    if (means.contains("stage")) {
      EXPECT_EQ(last_stage_from_progress(line + "\n"), means.at("stage")) << line;
      continue;
    }
    // A mark: a parent that forked and was not seen to end was killed by its child.
    const auto forked = std::string(channels::kChildForked) + "\n";
    util::atomic_write_file(file,
                            means.at("mark") == "child_forked" ? forked : forked + line + "\n");
    EXPECT_EQ(killed_by_its_child(file), means.at("mark") == "child_forked") << line;
    EXPECT_EQ(progress.at("grammar").at(means.at("mark").get<std::string>()), line);
  }
  for (const auto& counter : progress.at("counterexamples")) {
    const auto line = counter.get<std::string>();
    EXPECT_EQ(last_stage_from_progress(line + "\n"), "") << line;
    util::atomic_write_file(file, line + "\n");
    EXPECT_FALSE(killed_by_its_child(file)) << line;
  }
}

TEST(WorkerChannels, TheBatchLogIsReadAsTheSchemaSays) {
  const auto& log = section().at("lines").at("batch_log");
  for (const auto& example : log.at("examples")) {
    const auto line = example.at("line").get<std::string>();
    const auto& means = example.at("means");
    BatchMark mark;
    ASSERT_TRUE(parse_batch_mark(line, mark)) << line;
    EXPECT_EQ(mark.kind == BatchMark::Kind::begun ? "begun" : "done", means.at("kind")) << line;
    EXPECT_EQ(mark.id, means.at("id").get<std::size_t>()) << line;
    EXPECT_EQ(mark.figure, means.at("figure").get<std::uint64_t>()) << line;
    EXPECT_TRUE(log.at("grammar")
                    .at(means.at("kind").get<std::string>())
                    .get<std::string>()
                    .starts_with(means.at("kind").get<std::string>() + " "));
  }
  for (const auto& counter : log.at("counterexamples")) {
    BatchMark mark;
    EXPECT_FALSE(parse_batch_mark(counter.get<std::string>(), mark)) << counter;
  }
}

}  // namespace
}  // namespace portcheck
