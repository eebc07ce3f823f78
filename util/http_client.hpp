#pragma once
// An HTTP client on libcurl (util/libcurl_loader.hpp) for a plain object store: GET and PUT many
// objects at once over a few kept-alive connections. Every transfer is bounded by one timeout.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/remote_error.hpp"

namespace util {

struct HttpResponse {
  long status = 0;  // 200, 404, ...
  std::string body;
};

struct HttpSettings {
  std::chrono::milliseconds timeout{2000};  // per transfer, connecting included
  std::string user_agent;
  std::uint64_t max_body_bytes = 64ULL << 20;  // a longer answer is a transport failure
};

class HttpClient {
 public:
  // Throws TransportError when this system has no libcurl (or this build none).
  explicit HttpClient(HttpSettings settings);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One response per URL, in order. Throws TransportError for the first transfer that got no
  // HTTP answer (refused, timed out, reset, too long); the others still running are abandoned.
  std::vector<HttpResponse> get_many(const std::vector<std::string>& urls);
  // PUT of each (url, body); the statuses in order, every transfer run to its end. One that got
  // no answer has status 0, and the first such reason goes to `unanswered`: the caller can count
  // what the server confirmed before it went away.
  std::vector<long> put_many(const std::vector<std::pair<std::string, std::string>>& objects,
                             std::string& unanswered);

 private:
  struct Connections;  // the multi handle: connections kept alive across batches
  std::unique_ptr<Connections> connections_;
  HttpSettings settings_;
};

}  // namespace util
