#pragma once
// The fork server's server_event (python/portcheck_worker/protocol.schema.json) as the tool uses
// it: read once where a line of the server's event pipe enters (read_server_event: the schema's
// check and the conversion in one place), a struct per event after.
// tests/unit/worker_answers_test.cpp holds the structs to the schema.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace portcheck {

// The probe's answer, checked by checked_probe_answer (python_worker.hpp) after the protocol
// versions: a server of another install is exit 3, not a member out of place.
struct ServerProbed {
  nlohmann::json result;
};

// A warm-up done (or, deferred, put off until the server forks a compile itself).
struct ServerWarmed {
  double seconds = 0;
  std::vector<std::string> errors;
  std::optional<std::int64_t> threads;
  std::optional<bool> deferred;
};

struct ServerForked {
  std::int64_t id = 0;
  std::int64_t pid = 0;
  std::int64_t threads = 0;  // of the process the cell was forked from
};

struct ServerExited {
  std::int64_t id = 0;
  std::int64_t pid = 0;
  std::optional<std::int64_t> code;    // null when a signal ended it
  std::optional<std::int64_t> signal;  // null when it exited
  std::uint64_t max_rss_bytes = 0;
};

// A zygote's life, counted in the run's figures.
struct ServerZygote {
  std::string change;  // started | ready | unusable | warmed | retired
  std::string role;    // base | package
  std::optional<double> seconds;
};

using ServerEvent =
    std::variant<ServerProbed, ServerWarmed, ServerForked, ServerExited, ServerZygote>;

// One line of the server's events: nullopt for one that is not JSON (nothing else writes to the
// pipe, but never die on it). An event that breaks the schema, or the server's "error" (a command
// of ours it could not take), throws ProtocolError: a bug of ours. A probe event's answer is
// read later, by checked_probe_answer.
[[nodiscard]] std::optional<ServerEvent> read_server_event(std::string_view line);

// The event's name in the protocol ("probe", "warm", "forked", "exited", "zygote").
[[nodiscard]] std::string_view event_name(const ServerEvent& event);

// The event again, as the server wrote it.
[[nodiscard]] nlohmann::json event_message(const ServerEvent& event);

}  // namespace portcheck
