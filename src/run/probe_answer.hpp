#pragma once
// The worker's probe_answer (python/portcheck_worker/protocol.schema.json) as the tool uses it:
// read once where it enters (ProbeAnswer::read: the schema's check and the conversion in one
// place) and a struct everywhere after. tests/unit/probe_answer_test.cpp holds the struct to the
// schema: every member the schema defines is read here.
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace portcheck {

// target_problem: why the installed Triton cannot compile for a target.
struct TargetProblem {
  std::string reason;  // unknown | unsupported | refused
  std::string message;
  std::vector<std::string> valid;
  std::vector<std::string> nearest;
};

// target_description: one requested target as the installed backend decides it.
struct TargetDescription {
  std::string name;  // "cuda:90"
  std::string backend;
  std::string arch;
  std::optional<int> warp_size;
  std::optional<std::string> assembler_path;  // null: the backend assembles in process
  std::optional<std::string> assembler_version;
  std::optional<std::string> error;
  std::optional<TargetProblem> unsupported;
};

// static_tables: what the static pre-checks read from the installed Triton.
struct StaticTables {
  std::map<std::string, std::vector<std::string>> libdevice;  // by backend
  // By target: the fp8 dtypes it supports, or why its backend could not say.
  std::map<std::string, std::variant<std::vector<std::string>, std::string>> fp8;

  // From tables the schema has checked (a probe_answer's or an inspect_answer's), and back.
  static StaticTables from_checked(const nlohmann::json& tables);
  [[nodiscard]] nlohmann::json message() const;
};

// By backend (cuda, hip): the names of its compile options.
using OptionFields = std::map<std::string, std::vector<std::string>>;

struct ProbeAnswer {
  int protocol = 0;
  std::string worker;
  std::string python_version;
  std::string python_executable;
  std::vector<std::string> site_packages;
  std::string triton_version;
  std::string triton_path;
  std::string triton_family;
  OptionFields option_fields;
  std::vector<TargetDescription> targets;
  std::optional<StaticTables> static_tables;  // with predict
  std::optional<std::string> signal_guard_off;

  // `answer` checked against the schema and converted; throws ProtocolError (worker_protocol.hpp)
  // naming the member when it is not a probe_answer.
  static ProbeAnswer read(const nlohmann::json& answer);
  // The message again: read(m).message() == m for every probe_answer m whose optional members
  // are present (probe_answer_test.cpp holds the two to every member the schema defines).
  [[nodiscard]] nlohmann::json message() const;
};

}  // namespace portcheck
