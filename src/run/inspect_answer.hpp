#pragma once
// The worker's inspect_answer (python/portcheck_worker/protocol.schema.json) as the tool uses it:
// read once where it enters (InspectAnswer::read: the schema's check and the conversion in one
// place) and a struct everywhere after. tests/unit/worker_answers_test.cpp holds the struct to
// the schema: every member the schema defines is read.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/cell_answer.hpp"
#include "src/run/probe_answer.hpp"
#include "src/run/worker_protocol.hpp"

namespace portcheck {

// static_prediction: a cell the static pre-checks predict to fail.
struct StaticPrediction {
  std::string stage;
  std::string what;  // libdevice | fp8
  std::string name;
  std::string reason;

  // The report's `predicted`: {stage, what, name, reason}.
  [[nodiscard]] nlohmann::json to_json() const;
};

// One row of the module: its function's arguments, or the failure its cells get (the module did
// not import, or lacks the function).
struct InspectedKernel {
  bool ok = false;
  std::vector<std::string> args;        // with ok
  std::vector<std::string> constexprs;  // with ok
  std::optional<CellAnswer> failure;    // without ok: a cell_failure
};

// The static pre-checks' findings: by cell id, its predicted failure (nullopt: none predicted).
struct StaticFindings {
  std::map<std::string, std::optional<StaticPrediction>> cells;
  StaticTables tables;
  double seconds = 0;
};

struct InspectAnswer {
  std::map<std::string, InspectedKernel> kernels;          // by row id
  std::map<std::string, std::optional<std::string>> keys;  // by cell id: its cache key, or none
  bool asked_driver = false;
  std::optional<StaticFindings> static_findings;

  // `answer` checked against the schema and converted; throws ProtocolError (worker_protocol.hpp)
  // naming the member when it is not an inspect_answer.
  static InspectAnswer read(const nlohmann::json& answer);
  // The same, for a reader that says a breach in its own words.
  static Checked<InspectAnswer> try_read(const nlohmann::json& answer);
  // The message again: read(m).message() == m for every inspect_answer m.
  [[nodiscard]] nlohmann::json message() const;
};

}  // namespace portcheck
