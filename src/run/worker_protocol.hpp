#pragma once
// The protocol between the tool and python/portcheck_worker, as one file defines it:
// python/portcheck_worker/protocol.schema.json, embedded in the binary when it is built. The
// worker reads the same file. The tool checks every message it reads from the worker against it;
// the worker checks every message it reads from the tool.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/json_schema.hpp"

namespace portcheck {

// The schema, parsed once.
[[nodiscard]] const util::JsonSchema& worker_protocol_schema();

// The protocol this binary speaks: the schema's x-protocol-version. The probe carries it both
// ways; each side refuses another (exit 3).
[[nodiscard]] int worker_protocol_version();

// A message of the worker's that breaks the schema, though the versions matched: a bug of ours
// (exit 4), said in one line naming the message and the member.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why `message` is not a `message_kind` (a definition of the schema: probe_answer,
// compile_result, server_event, ...), as one line; nullopt when it is one.
[[nodiscard]] std::optional<std::string> protocol_problem(std::string_view message_kind,
                                                          const nlohmann::json& message);

// How a message of the worker's that breaks the schema is said, wherever it is found: "the
// worker's <what> breaks protocol N: <problem> (a bug of triton-portcheck: please report it)".
[[nodiscard]] std::string worker_breach(std::string_view what, std::string_view problem);

// Throws ProtocolError unless `message` is a `message_kind`.
void expect_protocol(std::string_view message_kind, const nlohmann::json& message);

// A message read where it enters, for a reader that says a breach in its own words: the typed
// message, or (value empty) why it is not what the schema defines, as protocol_problem says it.
template <typename Message>
struct Checked {
  std::optional<Message> value;
  std::string problem;
};

// The message that answers a request of `request_kind` (a cell request's "kind": compile,
// inspect, repro), as the schema's x-messages says: compile_result, inspect_answer, repro_answer.
// Throws std::invalid_argument for a kind the schema has no answer to.
[[nodiscard]] std::string answer_to(std::string_view request_kind);

}  // namespace portcheck
