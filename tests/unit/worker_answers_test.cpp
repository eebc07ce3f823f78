// The typed cell answers (compile_result, cell_failure, repro_answer, reproducer_result) and the
// inspect answer against the schema that defines them: a message with every member the schema
// has (and its parts', recursively) reads into the struct and is written back unchanged, so a
// member added to the schema fails here until the sample has it and the struct reads and writes
// it. A message that breaks the schema is never converted.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/capture/capture_record.hpp"
#include "src/run/cell_answer_read.hpp"
#include "src/run/inspect_answer.hpp"
#include "src/run/server_event.hpp"
#include "src/run/worker_protocol.hpp"
#include "tests/unit/schema_coverage.hpp"

namespace portcheck {
namespace {

using nlohmann::json;

json full_resources() {
  return {
      {"registers", 40}, {"stack_bytes", 0},   {"local_bytes", 0},       {"static_shared_bytes", 0},
      {"vgprs", 12},     {"sgprs", 20},        {"vgpr_spills", 0},       {"sgpr_spills", 0},
      {"lds_bytes", 0},  {"scratch_bytes", 0}, {"error", "no cuobjdump"}};
}

json full_launch() {
  return {{"needs", {{"threads_per_block", 128}, {"shared_bytes", 1024}}},
          {"problems", {"needs 1024 threads per block; cuda:75 allows 1024"}},
          {"exceeded", {"threads_per_block"}},
          {"autotuner", {{"skips", true}, {"raises", "OutOfResources"}}}};
}

json full_success() {
  return {{"status", "ok"},
          {"compile_s", 0.5},
          {"stages", {{"ttir", 0.1}, {"cubin", 0.4}}},
          {"metadata", kernel_metadata_sample()},
          {"sizes", {{"cubin", 9000}}},
          {"source", {{"file", "k.py"}, {"line", 3}}},
          {"resources", full_resources()},
          {"ttir_key", "abc"},
          {"shared_with", "axpy[2]"},
          {"launch", full_launch()},
          {"saved_ir", {"ir/axpy.ttir"}},
          {"export",
           {{"directory", "/out"},
            {"binary", "axpy.cubin"},
            {"assembly", "axpy.ptx"},
            {"params",
             {{{"name", "x"},
               {"kind", "argument"},
               {"triton_type", "*fp32"},
               {"divisible_by_16", true}}}},
            {"folded", {{{"name", "BLOCK"}, {"value", 128}, {"reason", "constexpr"}}}},
            {"launch",
             {{"threads_per_block", 128},
              {"shared_bytes", 1024},
              {"num_ctas", 1},
              {"tensor_memory_columns", 0},
              {"needs_shared_opt_in", false}}}}},
          {"output_error", {{"path", "/out/axpy.cubin"}, {"error", "No space left on device"}}}};
}

json full_failure() {
  return {{"status", "error"},
          {"stage", "ttgir"},
          {"error", {{"type", "CompilationError"}, {"message", "boom"}, {"traceback", "tb"}}},
          {"stages", {{"ttir", 0.1}}},
          {"compile_s", 0.2},
          {"error_source", {{"file", "k.py"}, {"line", 7}}},
          {"source", {{"file", "k.py"}, {"line", 3}}},
          {"ttir_key", "abc"},
          {"shared_with", "axpy[2]"},
          {"saved_ir", {"ir/axpy.ttir"}},
          {"autotuner", {{"skips", false}, {"raises", "CompilationError"}}}};
}

json full_repro() {
  return {{"status", "ok"},
          {"repro",
           {{"text", "#!/usr/bin/env python3\n"},
            {"lines", 40},
            {"imports_module", true},
            {"blockers", {"a decorator the copy cannot carry"}},
            {"shrink",
             {{"before_lines", 40},
              {"after_lines", 12},
              {"seconds", 3.5},
              {"candidates", 9},
              {"note", "done"}}},
            {"error", "none"}}}};
}

json reproducer_ok() {
  return {{"status", "ok"},
          {"metadata", kernel_metadata_sample()},
          {"resources", full_resources()},
          {"launch", full_launch()},
          {"triton_version", "3.9.0"}};
}

json reproducer_failed() {
  return {{"status", "error"},
          {"stage", "cubin"},
          {"error", {{"type", "PTXASError"}, {"message", "ptxas fatal"}, {"traceback", "tb"}}},
          {"triton_version", "3.9.0"}};
}

json full_inspection() {
  return {{"status", "ok"},
          {"kernels",
           {{"axpy", {{"ok", true}, {"args", {"x", "BLOCK"}}, {"constexprs", {"BLOCK"}}}},
            {"broken", {{"ok", false}, {"failure", full_failure()}}}}},
          {"keys", {{"0", "key0"}, {"1", nullptr}}},
          {"asked_driver", true},
          {"static",
           {{"cells",
             {{"0",
               {{"stage", "frontend"},
                {"what", "libdevice"},
                {"name", "erfcx"},
                {"reason", "no erfcx in libdevice on hip"}}},
              {"1", nullptr}}},
            {"tables",
             {{"libdevice", {{"cuda", {"erf"}}}},
              {"fp8", {{"cuda:75", {"fp8e5"}}, {"hip:gfx9", {{"error", "no"}}}}}}},
            {"seconds", 0.25}}}};
}

json reference(const std::string& name) { return {{"$ref", "#/$defs/" + name}}; }

// The inline alternative of a definition's oneOf whose status is `status`.
json alternative(const std::string& name, const std::string& status) {
  for (const auto& a : worker_protocol_schema().document().at("$defs").at(name).at("oneOf"))
    if (a.contains("properties") && a.at("properties").at("status").at("const") == status) return a;
  return nullptr;
}

std::set<std::string> missing_in(const json& schema, const json& sample) {
  std::set<std::string> missing;
  uncovered_members(schema, sample, "sample", missing);
  return missing;
}

TEST(WorkerAnswers, TheSamplesHaveEveryMemberTheSchemaDefines) {
  EXPECT_EQ(missing_in(reference("compile_success"), full_success()), std::set<std::string>{});
  EXPECT_EQ(missing_in(reference("cell_failure"), full_failure()), std::set<std::string>{});
  EXPECT_EQ(missing_in(alternative("repro_answer", "ok"), full_repro()), std::set<std::string>{});
  EXPECT_EQ(missing_in(alternative("reproducer_result", "ok"), reproducer_ok()),
            std::set<std::string>{});
  EXPECT_EQ(missing_in(alternative("reproducer_result", "error"), reproducer_failed()),
            std::set<std::string>{});
  EXPECT_EQ(missing_in(reference("inspect_answer"), full_inspection()), std::set<std::string>{});
}

TEST(WorkerAnswers, EveryMemberIsReadIntoTheStructAndWrittenBack) {
  const std::pair<const char*, json> samples[] = {
      {"compile_result", full_success()},        {"compile_result", full_failure()},
      {"cell_failure", full_failure()},          {"repro_answer", full_repro()},
      {"repro_answer", full_failure()},          {"reproducer_result", reproducer_ok()},
      {"reproducer_result", reproducer_failed()}};
  for (const auto& [kind, sample] : samples)
    EXPECT_EQ(read_cell_answer(kind, sample).message(), sample) << kind << " " << sample.dump();
  EXPECT_EQ(InspectAnswer::read(full_inspection()).message(), full_inspection());
}

// The members the schema lets be null (an unset count, no source, no shrink) and a target's
// string arch: read as absent, written as the schema allows, and the message written (which the
// result cache stores) is one the schema accepts and reads back the same.
TEST(WorkerAnswers, NullsReadAsAbsentAndTheMessageWrittenIsAValidOne) {
  auto success = full_success();
  success["source"] = nullptr;
  success["ttir_key"] = nullptr;
  for (const char* count : {"shared", "tmem_size", "global_scratch_size", "maxnreg"})
    success["metadata"][count] = nullptr;
  success["metadata"]["target"] = {{"backend", "hip"}, {"arch", "gfx942"}, {"warp_size", 64}};
  success["metadata"]["triton_version"] = nullptr;
  success["resources"]["vgprs"] = nullptr;
  auto no_target = full_success();
  no_target["metadata"]["target"] = nullptr;
  auto repro = full_repro();
  repro["repro"]["shrink"] = nullptr;
  const std::pair<const char*, json> samples[] = {
      {"compile_result", success}, {"compile_result", no_target}, {"repro_answer", repro}};
  for (const auto& [kind, sample] : samples) {
    const auto written = read_cell_answer(kind, sample).message();
    EXPECT_EQ(protocol_problem(kind, written), std::nullopt) << written.dump();
    EXPECT_EQ(read_cell_answer(kind, written).message(), written);
  }
  const auto read = read_cell_answer("compile_result", success);
  EXPECT_FALSE(read.source);
  EXPECT_FALSE(read.metadata->shared);
  EXPECT_EQ(std::get<std::string>(read.metadata->target->arch), "gfx942");
  EXPECT_TRUE(read.message().at("source").is_null()) << "compile_success requires it";
  EXPECT_FALSE(read.message().at("metadata").contains("shared"));
}

TEST(WorkerAnswers, TheStructsSayWhatTheMessagesSaid) {
  const auto ok = read_cell_answer("compile_result", full_success());
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.metadata->num_warps, 4);
  EXPECT_EQ(std::get<std::int64_t>(ok.metadata->target->arch), 90);
  EXPECT_EQ(ok.exported->launch.threads_per_block, 128u);
  EXPECT_EQ(ok.launch->autotuner->raises, "OutOfResources");
  const auto failed = read_cell_answer("compile_result", full_failure());
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.error->message, "boom");
  EXPECT_EQ(failed.error_source->line, 7);
  const auto inspected = InspectAnswer::read(full_inspection());
  EXPECT_EQ(inspected.kernels.at("broken").failure->stage, "ttgir");
  EXPECT_EQ(inspected.keys.at("1"), std::nullopt);
  EXPECT_EQ(inspected.static_findings->cells.at("0")->name, "erfcx");
}

// Every event the server writes but the probe (whose answer is probe_answer_test's), each with
// every member its alternative defines.
std::vector<json> server_events() {
  return {{{"event", "warm"},
           {"seconds", 1.5},
           {"errors", {"cuda:75: no"}},
           {"threads", 3},
           {"deferred", true}},
          {{"event", "forked"}, {"id", 7}, {"pid", 4242}, {"threads", 1}},
          {{"event", "exited"},
           {"id", 7},
           {"pid", 4242},
           {"code", 0},
           {"signal", 9},
           {"max_rss_bytes", 1 << 20}},
          {{"event", "zygote"}, {"change", "ready"}, {"role", "package"}, {"seconds", 2.5}}};
}

TEST(ServerEvents, EveryEventHasEveryMemberAndIsReadAndWrittenBack) {
  for (const auto& event : server_events()) {
    EXPECT_EQ(missing_in(reference("server_event"), event), std::set<std::string>{}) << event;
    const auto read = read_server_event(event.dump());
    ASSERT_TRUE(read) << event;
    EXPECT_EQ(event_message(*read), event);
    EXPECT_EQ(event_name(*read), event.at("event").get<std::string>());
  }
  // The alternatives the schema has, each tried above (the error event is thrown, below; the
  // probe's answer is checked after the version match).
  std::set<std::string> names = {"probe", "error"};
  for (const auto& event : server_events()) names.insert(event.at("event").get<std::string>());
  std::set<std::string> defined;
  for (const auto& a :
       worker_protocol_schema().document().at("$defs").at("server_event").at("oneOf"))
    defined.insert(a.at("properties").at("event").at("const").get<std::string>());
  EXPECT_EQ(names, defined);
}

TEST(ServerEvents, ABreachOrAnErrorEventIsOurBugAndNotJsonIsSkipped) {
  EXPECT_FALSE(read_server_event("not json"));
  EXPECT_THROW((void)read_server_event(R"({"event": "forked", "id": 1})"), ProtocolError);
  EXPECT_THROW((void)read_server_event(R"({"event": "error", "message": "bad op"})"),
               ProtocolError);
  const auto probe = read_server_event(R"({"event": "probe", "result": {"protocol": 999}})");
  ASSERT_TRUE(probe);  // its answer waits for the version check
  EXPECT_EQ(std::get<ServerProbed>(*probe).result.at("protocol"), 999);
}

std::vector<json> capture_records() {
  return {
      {{"version", 1},
       {"mode", "record"},
       {"kernel",
        {{"module", "pkg.kernels"},
         {"qualname", "add_kernel"},
         {"file", "/src/pkg/kernels.py"},
         {"line", 12},
         {"attribute", "add"},
         {"import_root", "/src"},
         {"not_importable", "generated at run time"},
         {"arg_names", {"x", "BLOCK"}},
         {"generated_source", "import triton\n"},
         {"generated_paths", {"/tmp/gen"}}}},
       {"specialization", {{"signature", {{"x", "*fp32"}}}}},
       {"explicit_options", {{"num_warps", 4}}},
       {"autotune", {{"config", "BLOCK: 64"}, {"count", 2}, {"index", 1}}},
       {"warmup", false},
       {"site", "/src/tests/test_add.py:9"},
       {"test", "tests/test_add.py::test_add"},
       {"persona", "cuda:90"},
       {"identity", "0123456789abcdef"}},
      {{"version", 1}, {"autotuned", {{"configs", {"0123456789abcdef"}}, {"persona", "cuda:90"}}}},
      {{"version", 1}, {"warning", "a launch on a fake tensor"}}};
}

TEST(CaptureRecords, EveryRecordHasEveryMemberAndIsReadAndWrittenBack) {
  for (const auto& record : capture_records()) {
    EXPECT_EQ(missing_in(reference("capture_record"), record), std::set<std::string>{}) << record;
    const auto read = read_capture_record(record);
    ASSERT_TRUE(read.value) << read.problem;
    EXPECT_EQ(record_message(*read.value), record);
  }
  auto torn = capture_records().front();
  torn["kernel"].erase("arg_names");
  EXPECT_FALSE(read_capture_record(torn).value);
}

TEST(WorkerAnswers, AnAnswerThatBreaksTheSchemaIsNotConverted) {
  auto unknown = full_success();
  unknown["metadata"]["registers"] = 40;  // a member of resources, not of the metadata
  EXPECT_THROW((void)read_cell_answer("compile_result", unknown), ProtocolError);
  const auto checked = try_read_cell_answer("compile_result", unknown);
  EXPECT_FALSE(checked.value);
  EXPECT_NE(checked.problem.find("metadata"), std::string::npos) << checked.problem;
  auto without_failure = full_inspection();
  without_failure["kernels"]["broken"].erase("failure");
  EXPECT_THROW((void)InspectAnswer::read(without_failure), ProtocolError);
}

}  // namespace
}  // namespace portcheck
