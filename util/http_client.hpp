#pragma once
// An HTTP client on libcurl (util/libcurl_loader.hpp) for a plain object store: GET many objects
// at once over a few connections, PUT one. Every transfer is bounded by one timeout.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "util/remote_error.hpp"

namespace util {

struct HttpResponse {
  long status = 0;  // 200, 404, ...
  std::string body;
};

class HttpClient {
 public:
  // Throws TransportError when this system has no libcurl (or this build none).
  explicit HttpClient(std::chrono::milliseconds timeout);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One response per URL, in order. Throws TransportError for the first transfer that got no
  // HTTP answer (refused, timed out, reset); the others still running are abandoned.
  std::vector<HttpResponse> get_many(const std::vector<std::string>& urls);
  // The status of a PUT of `body`; throws TransportError as above.
  long put(const std::string& url, std::string_view body);

 private:
  void* multi_ = nullptr;         // CURLM*: its connections are kept alive across batches
  void* easy_for_put_ = nullptr;  // CURL*, kept across PUTs: one connection, kept alive
  std::chrono::milliseconds timeout_;
};

}  // namespace util
