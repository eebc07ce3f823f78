#include "src/run/worker_protocol.hpp"

#include <fmt/format.h>

#include "src/run/protocol_schema.hpp"

namespace portcheck {

const util::JsonSchema& worker_protocol_schema() {
  // Parsed on first use: a schema the build embedded broken fails every test at once.
  static const util::JsonSchema schema(nlohmann::json::parse(embedded::kProtocolSchema));
  return schema;
}

int worker_protocol_version() {
  static const int version =
      worker_protocol_schema().document().at("x-protocol-version").get<int>();
  return version;
}

std::optional<std::string> protocol_problem(std::string_view message_kind,
                                            const nlohmann::json& message) {
  return worker_protocol_schema().problem(message_kind, message);
}

std::string worker_breach(std::string_view what, std::string_view problem) {
  return fmt::format(
      "the worker's {} breaks protocol {}: {} (a bug of triton-portcheck: please report it)", what,
      worker_protocol_version(), problem);
}

void expect_protocol(std::string_view message_kind, const nlohmann::json& message) {
  if (const auto problem = protocol_problem(message_kind, message))
    throw ProtocolError("protocol error: " + worker_breach(message_kind, *problem));
}

std::string answer_to(std::string_view request_kind) {
  const auto request = fmt::format("{}_request", request_kind);
  for (const auto& [name, message] : worker_protocol_schema().document().at("x-messages").items())
    if (message.value("answers", "") == request) return name;
  throw std::invalid_argument(
      fmt::format("protocol {} has no answer to a {}", worker_protocol_version(), request));
}

}  // namespace portcheck
