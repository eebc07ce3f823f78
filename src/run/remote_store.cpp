#include "src/run/remote_store.hpp"

#include <fmt/format.h>

#include "src/run/result_cache.hpp"
#include "util/http_client.hpp"
#include "util/redis_client.hpp"

namespace portcheck {
namespace {

// One answer (an MGET of up to 256 entries of a few KiB, or the replies to pipelined SETs) is far
// below this; one as large is refused as a whole, before it costs more memory.
constexpr std::size_t kMaxAnswerBytes = kMaxEntryBytes;

class RedisStore : public RemoteStore {
 public:
  RedisStore(const RemoteUrl& url, std::chrono::milliseconds timeout)
      : client_({url.host, url.port, url.db, url.user, url.password}, timeout, kMaxAnswerBytes) {}

  std::vector<std::optional<std::string>> get_many(const std::vector<std::string>& keys) override {
    std::vector<std::string> names;
    names.reserve(keys.size());
    for (const auto& key : keys) names.push_back(name_of(key));
    return client_.get_many(names);
  }
  // A pipeline's replies are all or nothing here: a connection lost mid-way confirms none.
  void put_many(const std::vector<std::pair<std::string, std::string>>& items,
                std::size_t& acknowledged) override {
    std::vector<std::pair<std::string, std::string>> named;
    named.reserve(items.size());
    for (const auto& [key, value] : items) named.emplace_back(name_of(key), value);
    client_.set_many(named);
    acknowledged = items.size();
  }
  void ping() override { client_.ping(); }

 private:
  // A namespace of its own, so that one Redis can serve other tools (ccache's keys are "ccache:").
  static std::string name_of(const std::string& key) { return "triton-portcheck:" + key; }
  util::RedisClient client_;
};

class HttpStore : public RemoteStore {
 public:
  HttpStore(const RemoteUrl& url, std::chrono::milliseconds timeout)
      : base_(url.base), timeout_(timeout) {}

  std::vector<std::optional<std::string>> get_many(const std::vector<std::string>& keys) override {
    std::vector<std::string> urls;
    urls.reserve(keys.size());
    for (const auto& key : keys) urls.push_back(url_of(key));
    std::vector<std::optional<std::string>> out;
    for (auto& response : client().get_many(urls)) {
      if (response.status == 200)
        out.emplace_back(std::move(response.body));
      else if (response.status == 404)
        out.emplace_back(std::nullopt);
      else
        throw util::RejectedError(fmt::format("GET answered HTTP {}", response.status));
    }
    return out;
  }

  void put_many(const std::vector<std::pair<std::string, std::string>>& items,
                std::size_t& acknowledged) override {
    std::vector<std::pair<std::string, std::string>> objects;
    objects.reserve(items.size());
    for (const auto& [key, value] : items) objects.emplace_back(url_of(key), value);
    std::string unanswered;
    const auto statuses = client().put_many(objects, unanswered);
    long refused = 0;
    for (const auto status : statuses) {
      if (status >= 200 && status <= 299)
        ++acknowledged;
      else if (status != 0 && refused == 0)
        refused = status;
    }
    if (!unanswered.empty()) throw util::TransportError(unanswered);
    if (refused != 0) throw util::RejectedError(fmt::format("PUT answered HTTP {}", refused));
  }

  // A key that is surely absent: 404 (or 200) means the store is there and lets us read;
  // 401, 403 or 500 is said as such.
  void ping() override { get_many({"portcheck-ping"}); }

 private:
  [[nodiscard]] std::string url_of(const std::string& key) const { return base_ + "/" + key; }
  // Made on first use: a system without libcurl learns it then, as a failed request.
  util::HttpClient& client() {
    if (!client_)
      client_ = std::make_unique<util::HttpClient>(
          util::HttpSettings{timeout_, "triton-portcheck/" PORTCHECK_VERSION, kMaxEntryBytes});
    return *client_;
  }
  std::string base_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<util::HttpClient> client_;
};

}  // namespace

std::unique_ptr<RemoteStore> open_remote_store(const RemoteUrl& url,
                                               std::chrono::milliseconds timeout) {
  if (url.kind == RemoteUrl::Kind::redis) return std::make_unique<RedisStore>(url, timeout);
  return std::make_unique<HttpStore>(url, timeout);
}

}  // namespace portcheck
