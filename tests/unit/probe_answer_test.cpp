// The typed probe answer against the schema that defines it: a message with every member the
// schema's probe_answer has (and its parts', recursively) reads into the struct and is written
// back unchanged, so a member added to the schema fails here until the sample has it and the
// struct reads and writes it.
#include "src/run/probe_answer.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "src/run/worker_protocol.hpp"
#include "tests/unit/schema_coverage.hpp"

namespace portcheck {
namespace {

nlohmann::json full_answer() {
  const nlohmann::json unsupported = {{"reason", "refused"},
                                      {"message", "gfx9999 is not a known arch"},
                                      {"valid", {"gfx942", "gfx950"}},
                                      {"nearest", {"gfx942"}}};
  return {
      {"protocol", worker_protocol_version()},
      {"worker", "/site/portcheck_worker"},
      {"python", {{"version", "3.12.3"}, {"executable", "/venv/bin/python"}}},
      {"site_packages", {"/venv/lib/python3.12/site-packages"}},
      {"triton", {{"version", "3.9.0"}, {"path", "/venv/triton"}, {"family", "3.9"}}},
      {"option_fields", {{"cuda", {"num_stages", "num_warps"}}, {"hip", {"waves_per_eu"}}}},
      {"targets",
       {{{"name", "cuda:90"},
         {"backend", "cuda"},
         {"arch", "90"},
         {"warp_size", 32},
         {"assembler", {{"path", "/venv/triton/backends/nvidia/bin/ptxas"}, {"version", "12.8"}}}},
        {{"name", "hip:gfx942"},
         {"backend", "hip"},
         {"arch", "gfx942"},
         {"warp_size", 64},
         {"assembler", {{"path", nullptr}, {"version", "LLVM AMDGPU backend, in process"}}}},
        {{"name", "hip:gfx9999"},
         {"backend", "hip"},
         {"arch", "gfx9999"},
         {"error", "ValueError: gfx9999 is not a known arch"},
         {"unsupported", unsupported}}}},
      {"static",
       {{"tables",
         {{"libdevice", {{"cuda", {"erf", "exp"}}, {"hip", {"erf"}}}},
          {"fp8", {{"cuda:90", {"fp8e4nv", "fp8e5"}}, {"hip:gfx9999", {{"error", "no"}}}}}}}}},
      {"signal_guard_off", "seccomp is not available"}};
}

TEST(ProbeAnswer, TheSampleHasEveryMemberTheSchemaDefines) {
  std::set<std::string> missing;
  uncovered_members({{"$ref", "#/$defs/probe_answer"}}, full_answer(), "probe_answer", missing);
  EXPECT_TRUE(missing.empty()) << nlohmann::json(missing).dump();
}

TEST(ProbeAnswer, EveryMemberIsReadIntoTheStructAndWrittenBack) {
  const auto sample = full_answer();
  const auto read = ProbeAnswer::read(sample);
  EXPECT_EQ(read.message(), sample);
  EXPECT_EQ(read.targets.at(2).unsupported->nearest, std::vector<std::string>{"gfx942"});
  EXPECT_EQ(std::get<std::string>(read.static_tables->fp8.at("hip:gfx9999")), "no");
}

TEST(ProbeAnswer, AnAnswerThatBreaksTheSchemaIsNotRead) {
  auto sample = full_answer();
  sample["option_fields"]["cuda"] = {{"num_warps", 4}};  // the defaults it once promised
  EXPECT_THROW((void)ProbeAnswer::read(sample), ProtocolError);
}

}  // namespace
}  // namespace portcheck
