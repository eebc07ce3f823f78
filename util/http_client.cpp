#include "util/http_client.hpp"

#if PORTCHECK_HAVE_CURL
#include <algorithm>

#include "util/libcurl_loader.hpp"
#endif

namespace util {

#if PORTCHECK_HAVE_CURL
namespace {

// Transfers at once: enough to hide the latency of a distant server, few enough not to look
// like an attack to it.
constexpr long kParallelTransfers = 8;
// Each transfer's timeout runs from when it is added, queued or not: a batch is as many as the
// connections finish well within one timeout even from a server a continent away.
constexpr auto kPerBatch = 4 * static_cast<std::size_t>(kParallelTransfers);

const Libcurl& api() {
  const char* why = nullptr;
  const auto* loaded = libcurl(&why);
  if (loaded == nullptr) throw TransportError(why);
  return *loaded;
}

struct EasyDeleter {
  void operator()(CURL* easy) const { api().easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { api().multi_cleanup(multi); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { api().slist_free_all(list); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;
using Multi = std::unique_ptr<CURLM, MultiDeleter>;
using HeaderList = std::unique_ptr<curl_slist, ListDeleter>;

// Where a transfer's answer goes; past `limit` bytes the transfer is aborted.
struct Sink {
  std::string* body;
  std::uint64_t limit;
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* to) {
  auto* sink = static_cast<Sink*>(to);
  if (sink->body->size() + size * count > sink->limit) return 0;  // curl: CURLE_WRITE_ERROR
  sink->body->append(data, size * count);
  return size * count;
}

// One transfer, ready to add to a batch: bounded in time and size, no signals (the tool handles
// its own), no redirects followed (a cache that moved is misconfigured, not a reason to go
// elsewhere).
struct Transfer {
  Easy easy;
  std::string body;
  Sink sink{&body, 0};
  HeaderList headers;

  Transfer(const std::string& url, const HttpSettings& settings) : easy(api().easy_init()) {
    if (!easy) throw TransportError("curl_easy_init failed");
    sink.limit = settings.max_body_bytes;
    const auto& c = api();
    auto* e = easy.get();
    c.easy_setopt(e, CURLOPT_URL, url.c_str());
    c.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    c.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(settings.timeout.count()));
    c.easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(settings.timeout.count()));
    c.easy_setopt(e, CURLOPT_WRITEFUNCTION, &append_body);
    c.easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    c.easy_setopt(e, CURLOPT_USERAGENT, settings.user_agent.c_str());
  }

  // `content` must outlive the transfer (curl does not copy POSTFIELDS).
  void make_put(const std::string& content) {
    const auto& c = api();
    headers.reset(c.slist_append(nullptr, "Content-Type: application/json"));
    headers.reset(c.slist_append(headers.release(), "Expect:"));  // no 100-continue round trip
    c.easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());
    c.easy_setopt(easy.get(), CURLOPT_CUSTOMREQUEST, "PUT");
    c.easy_setopt(easy.get(), CURLOPT_POSTFIELDS, content.data());
    c.easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(content.size()));
  }

  // 0 when no whole answer came (a reset mid-answer can leave curl a status of its own).
  [[nodiscard]] long status() const {
    if (unanswered) return 0;
    long status = 0;
    api().easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &status);
    return status;
  }
  bool unanswered = false;
};

// Transfers attached to the client's multi handle for one batch; detached however it ends. The
// multi handle, and the connections it keeps alive, stay for the next batch.
class Batch {
 public:
  explicit Batch(CURLM* multi) : multi_(multi) {}
  ~Batch() {
    for (auto& t : transfers_) api().multi_remove_handle(multi_, t->easy.get());
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  Transfer& add(std::unique_ptr<Transfer> transfer) {
    api().multi_add_handle(multi_, transfer->easy.get());
    transfers_.push_back(std::move(transfer));
    return *transfers_.back();
  }
  // Runs until every transfer is done. A transfer that failed without an answer throws at once
  // when `stop_at_failure`; otherwise it keeps status 0 and the first such reason is returned.
  std::string run(bool stop_at_failure) {
    const auto& c = api();
    std::string first_failure;
    int running = 1;
    while (running > 0) {
      if (c.multi_perform(multi_, &running) != CURLM_OK) throw TransportError("curl_multi failed");
      int left = 0;
      while (const auto* message = c.multi_info_read(multi_, &left)) {
        if (message->msg != CURLMSG_DONE || message->data.result == CURLE_OK) continue;
        const std::string why = c.easy_strerror(message->data.result);
        if (stop_at_failure) throw TransportError(why);
        mark_unanswered(message->easy_handle);
        if (first_failure.empty()) first_failure = why;
      }
      if (running > 0) c.multi_wait(multi_, nullptr, 0, 1000, nullptr);
    }
    return first_failure;
  }
  [[nodiscard]] Transfer& at(std::size_t i) const { return *transfers_[i]; }

 private:
  void mark_unanswered(CURL* easy) {
    for (auto& t : transfers_)
      if (t->easy.get() == easy) t->unanswered = true;
  }
  CURLM* multi_;
  std::vector<std::unique_ptr<Transfer>> transfers_;  // stable addresses: curl holds pointers
};

}  // namespace

struct HttpClient::Connections {
  Multi multi;
};

HttpClient::HttpClient(HttpSettings settings)
    : connections_(std::make_unique<Connections>()), settings_(std::move(settings)) {
  connections_->multi.reset(api().multi_init());
  if (!connections_->multi) throw TransportError("curl_multi_init failed");
  api().multi_setopt(connections_->multi.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, kParallelTransfers);
}

HttpClient::~HttpClient() = default;

std::vector<HttpResponse> HttpClient::get_many(const std::vector<std::string>& urls) {
  std::vector<HttpResponse> out(urls.size());
  for (std::size_t first = 0; first < urls.size(); first += kPerBatch) {
    const auto last = std::min(urls.size(), first + kPerBatch);
    Batch batch(connections_->multi.get());
    for (std::size_t i = first; i < last; ++i)
      batch.add(std::make_unique<Transfer>(urls[i], settings_));
    batch.run(/*stop_at_failure=*/true);
    for (std::size_t i = first; i < last; ++i) {
      auto& transfer = batch.at(i - first);
      out[i] = {transfer.status(), std::move(transfer.body)};
    }
  }
  return out;
}

std::vector<long> HttpClient::put_many(
    const std::vector<std::pair<std::string, std::string>>& objects, std::string& unanswered) {
  std::vector<long> out(objects.size());
  for (std::size_t first = 0; first < objects.size(); first += kPerBatch) {
    const auto last = std::min(objects.size(), first + kPerBatch);
    Batch batch(connections_->multi.get());
    for (std::size_t i = first; i < last; ++i)
      batch.add(std::make_unique<Transfer>(objects[i].first, settings_))
          .make_put(objects[i].second);
    auto why = batch.run(/*stop_at_failure=*/false);
    if (unanswered.empty()) unanswered = std::move(why);
    for (std::size_t i = first; i < last; ++i) out[i] = batch.at(i - first).status();
  }
  return out;
}

#else  // built without libcurl's header

struct HttpClient::Connections {};

HttpClient::HttpClient(HttpSettings settings) : settings_(std::move(settings)) {
  throw TransportError(
      "this build has no HTTP client (libcurl's header was not found when it was built)");
}
HttpClient::~HttpClient() = default;
std::vector<HttpResponse> HttpClient::get_many(const std::vector<std::string>&) { return {}; }
std::vector<long> HttpClient::put_many(const std::vector<std::pair<std::string, std::string>>&,
                                       std::string&) {
  return {};
}

#endif

}  // namespace util
