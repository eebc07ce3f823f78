// The protocol between the tool and its worker as the tool holds it: the checker
// (util::JsonSchema), the schema embedded at build time, and the requests the tool builds. The
// worker's side is tests/integration/test_protocol_schema.py; both read the same cases
// (tests/unit/data/protocol-cases.json) and must say the same of each, word for word.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/check/module_inspection.hpp"
#include "src/run/fork_server.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"
#include "util/json_schema.hpp"

namespace portcheck {
namespace {

using Json = nlohmann::json;

Json schema_with(const Json& definition) { return {{"$defs", {{"message", definition}}}}; }

TEST(JsonSchema, RefusesAKeywordItDoesNotCheck) {
  // A "maximum" it skipped would be a promise the schema makes and nobody keeps.
  EXPECT_THROW(util::JsonSchema(schema_with({{"type", "integer"}, {"maximum", 10}})),
               std::invalid_argument);
  EXPECT_THROW(util::JsonSchema(
                   schema_with({{"properties", {{"n", {{"type", "string"}, {"pattern", "^a"}}}}}})),
               std::invalid_argument);
  EXPECT_NO_THROW(util::JsonSchema(schema_with(
      {{"type", "integer"}, {"description", "a count"}, {"x-note", "annotations are fine"}})));
}

TEST(JsonSchema, RefusesAReferenceToNothing) {
  EXPECT_THROW(util::JsonSchema(schema_with({{"$ref", "#/$defs/elsewhere"}})),
               std::invalid_argument);
  const util::JsonSchema schema(schema_with({{"type", "object"}}));
  EXPECT_THROW((void)schema.problem("other", Json::object()), std::invalid_argument);
}

TEST(JsonSchema, TheSharedCasesGetTheSameAnswersAsTheWorkersChecker) {
  const auto cases = Json::parse(
      util::read_file(std::filesystem::path(PORTCHECK_TEST_DATA) / "protocol-cases.json"));
  ASSERT_GE(cases.at("cases").size(), 30u);
  for (const auto& c : cases.at("cases")) {
    const auto expected = c.at("problem").is_null()
                              ? std::nullopt
                              : std::optional(c.at("problem").get<std::string>());
    EXPECT_EQ(protocol_problem(c.at("definition").get<std::string>(), c.at("message")), expected)
        << c.at("why");
  }
}

TEST(WorkerProtocol, TheVersionIsTheSchemas) {
  const auto& document = worker_protocol_schema().document();
  EXPECT_EQ(worker_protocol_version(), document.at("x-protocol-version").get<int>());
  EXPECT_EQ(with_protocol({{"targets", Json::array()}}).at("protocol"), worker_protocol_version());
  // Every message x-messages lists is defined.
  for (const auto& [name, _] : document.at("x-messages").items())
    EXPECT_TRUE(worker_protocol_schema().defines(name)) << name;
}

TEST(WorkerProtocol, EachCellRequestHasItsAnswer) {
  EXPECT_EQ(answer_to("compile"), "compile_result");
  EXPECT_EQ(answer_to("inspect"), "inspect_answer");
  EXPECT_EQ(answer_to("repro"), "repro_answer");
  EXPECT_THROW((void)answer_to("teleport"), std::invalid_argument);
}

TEST(WorkerProtocol, TheProbeRequestsTheToolSendsAreProbeRequests) {
  const Json target = {{"backend", "cuda"}, {"arch", "90"}, {"warp_size", 32}};
  for (const auto& request :
       {with_protocol({{"targets", Json::array()}}),
        with_protocol({{"targets", {target}}, {"predict", true}, {"tool_version", "0.9.0"}})})
    EXPECT_EQ(protocol_problem("probe_request", request), std::nullopt) << request.dump();
  EXPECT_EQ(protocol_problem("probe_request", with_protocol({{"keys", false}})),
            "probe_request: missing member \"targets\"");
}

TEST(WorkerProtocol, TheForkCommandsTheToolSendsAreServerCommands) {
  ProcessSpec spec;
  spec.request_path = "/run/cell-1/request.json";
  spec.result_path = "/run/cell-1/result.json";
  spec.progress_path = "/run/cell-1/progress";
  spec.stdout_path = "/run/cell-1/stdout";
  spec.stderr_path = "/run/cell-1/stderr";
  spec.timeout = std::chrono::seconds(120);
  EXPECT_EQ(protocol_problem("server_command", fork_command(1, spec)), std::nullopt);
  const auto batch = fork_command(1, spec, {{1, &spec}, {2, &spec}}, "/run/batch-1.log");
  EXPECT_EQ(protocol_problem("server_command", batch), std::nullopt) << batch.dump();
  EXPECT_EQ(batch.at("batch").size(), 2u);
}

TEST(WorkerProtocol, TheInspectionRequestIsAnInspectRequest) {
  ModuleToInspect module;
  module.kernels.push_back(
      {{"id", "add"}, {"kernel", {{"module", "k"}, {"function", "add"}, {"import_root", "/k"}}}});
  InspectionSettings settings;
  settings.common = {
      {"tool_version", "0.9.0"}, {"targets", Json::array()}, {"keys", true}, {"predict", true}};
  std::vector<PlannedCell> cells(2);
  EXPECT_EQ(
      protocol_problem("inspect_request", Json::parse(inspection_request(module, cells, settings))),
      std::nullopt);
  // Each cell's request is written into it as it is, whatever text of the user's it carries.
  const Json written = {{"row_name", "\"portcheck:cells\" ["}, {"n", 2}};
  cells[1].request = written;
  cells[1].seal();
  module.cell_ids = {1};
  const auto request = Json::parse(inspection_request(module, cells, settings));
  EXPECT_EQ(request.at("cells"), Json::array({{{"id", 1}, {"request", written}}}));
  EXPECT_EQ(request.at("kind"), "inspect");
}

TEST(WorkerProtocol, AnAnswerThatBreaksTheSchemaIsOneLineNamingTheMember) {
  try {
    expect_protocol("server_event",
                    {{"event", "forked"}, {"id", 1}, {"pid", "12"}, {"threads", 1}});
    FAIL() << "no ProtocolError";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("protocol error: the worker's server_event breaks protocol {}: "
                          "server_event.pid: expected integer, found string (a bug of "
                          "triton-portcheck: please report it)",
                          worker_protocol_version()));
  }
}

}  // namespace
}  // namespace portcheck
