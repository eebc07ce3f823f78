#pragma once
// A Redis client: GET in batches, SET, PING. Each answer is bounded as a whole, in time (one
// timeout from the request's first byte sent to its last reply read, however the server paces
// its bytes) and in size (bytes read for it). What a server says may echo the password: the caller
// masks it where it shows a message. hiredis connects and parses; the bytes go through our own
// poll()ed reads and writes, so neither bound depends on a per-read socket timeout.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/remote_error.hpp"

struct redisContext;

namespace util {

struct RedisAddress {
  std::string host = "localhost";
  int port = 6379;
  int db = 0;
  std::string user;      // Redis 6 ACL user; empty: the default user
  std::string password;  // empty: no AUTH
};

// Whether this build has hiredis (cmake: found at build time, else the client is absent).
bool redis_supported();

// Connects lazily, on the first request; a request that finds the connection broken throws
// TransportError and drops it, so a later request connects again.
class RedisClient {
 public:
  // `max_answer_bytes`: the most one answer (one MGET batch, one pipelined SET) may take.
  RedisClient(RedisAddress address, std::chrono::milliseconds timeout,
              std::size_t max_answer_bytes);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // One value per key (nullopt: absent or not a string), fetched with MGET in batches so that
  // a thousand keys cost a few round trips.
  std::vector<std::optional<std::string>> get_many(const std::vector<std::string>& keys);
  // SET of every (key, value), pipelined: one round trip for the lot. Throws RejectedError for
  // the first the server refused (the others may have been stored).
  void set_many(const std::vector<std::pair<std::string, std::string>>& items);
  void ping();

 private:
  redisContext* connection();
  void drop();
  // Runs `request`; a TransportError drops the connection, so the next request connects again.
  template <typename Request>
  auto guarded(Request request);
  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  std::size_t max_answer_bytes_;
  redisContext* context_ = nullptr;
};

}  // namespace util
