#include "src/run/server_event.hpp"

#include "src/run/worker_protocol.hpp"
#include "util/json_reader.hpp"

namespace portcheck {
namespace {

using nlohmann::json;
using util::optional_member;
using util::put_optional;

// The readers below run on an event the schema has checked (all but the probe's answer).
ServerEvent read_checked(std::string_view name, const json& e) {
  if (name == "probe") return ServerProbed{e.at("result")};
  if (name == "warm")
    return ServerWarmed{
        e.at("seconds").get<double>(), e.at("errors").get<std::vector<std::string>>(),
        optional_member<std::int64_t>(e, "threads"), optional_member<bool>(e, "deferred")};
  if (name == "forked")
    return ServerForked{e.at("id").get<std::int64_t>(), e.at("pid").get<std::int64_t>(),
                        e.at("threads").get<std::int64_t>()};
  if (name == "exited")
    return ServerExited{e.at("id").get<std::int64_t>(), e.at("pid").get<std::int64_t>(),
                        optional_member<std::int64_t>(e, "code"),
                        optional_member<std::int64_t>(e, "signal"),
                        e.at("max_rss_bytes").get<std::uint64_t>()};
  return ServerZygote{e.at("change").get<std::string>(), e.at("role").get<std::string>(),
                      optional_member<double>(e, "seconds")};
}

struct Message {
  json operator()(const ServerProbed& e) const {
    return {{"event", "probe"}, {"result", e.result}};
  }
  json operator()(const ServerWarmed& e) const {
    json out = {{"event", "warm"}, {"seconds", e.seconds}, {"errors", e.errors}};
    put_optional(out, "threads", e.threads);
    put_optional(out, "deferred", e.deferred);
    return out;
  }
  json operator()(const ServerForked& e) const {
    return {{"event", "forked"}, {"id", e.id}, {"pid", e.pid}, {"threads", e.threads}};
  }
  json operator()(const ServerExited& e) const {
    return {{"event", "exited"},
            {"id", e.id},
            {"pid", e.pid},
            {"code", e.code ? json(*e.code) : json()},
            {"signal", e.signal ? json(*e.signal) : json()},
            {"max_rss_bytes", e.max_rss_bytes}};
  }
  json operator()(const ServerZygote& e) const {
    json out = {{"event", "zygote"}, {"change", e.change}, {"role", e.role}};
    put_optional(out, "seconds", e.seconds);
    return out;
  }
};

}  // namespace

std::optional<ServerEvent> read_server_event(std::string_view line) {
  const auto event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) return std::nullopt;
  const auto it = event.is_object() ? event.find("event") : event.end();
  const auto name = it != event.end() && it->is_string() ? it->get<std::string>() : std::string();
  // A probe's answer waits for the version check; everything else is checked here, whole.
  if (name == "probe" && event.contains("result")) return ServerProbed{event.at("result")};
  expect_protocol("server_event", event);
  if (name == "error") throw ProtocolError(event.at("message").get<std::string>());
  return read_checked(name, event);
}

std::string_view event_name(const ServerEvent& event) {
  static constexpr std::string_view kNames[] = {"probe", "warm", "forked", "exited", "zygote"};
  static_assert(std::size(kNames) == std::variant_size_v<ServerEvent>);
  return kNames[event.index()];
}

json event_message(const ServerEvent& event) { return std::visit(Message{}, event); }

}  // namespace portcheck
