#include "util/http_client.hpp"

#if PORTCHECK_HAVE_CURL
#include <algorithm>
#include <memory>

#include "util/libcurl_loader.hpp"
#endif

namespace util {

#if PORTCHECK_HAVE_CURL
namespace {

// Transfers at once in a batch of GETs: enough to hide the latency of a remote server, few
// enough not to look like an attack to it.
constexpr long kParallelTransfers = 8;

const Libcurl& api() {
  const char* why = nullptr;
  const auto* loaded = libcurl(&why);
  if (loaded == nullptr) throw TransportError(why);
  return *loaded;
}

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* into) {
  static_cast<std::string*>(into)->append(data, size * count);
  return size * count;
}

// Options every transfer shares: bounded in time, no signals (the tool handles its own), no
// redirects followed (a cache that moved is misconfigured, not a reason to go elsewhere).
void common_options(CURL* easy, const std::string& url, std::string* body,
                    std::chrono::milliseconds timeout) {
  const auto& c = api();
  c.easy_setopt(easy, CURLOPT_URL, url.c_str());
  c.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  c.easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  c.easy_setopt(easy, CURLOPT_WRITEFUNCTION, &append_body);
  c.easy_setopt(easy, CURLOPT_WRITEDATA, body);
  c.easy_setopt(easy, CURLOPT_USERAGENT, "triton-portcheck");
}

long status_of(CURL* easy) {
  long status = 0;
  api().easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

struct EasyDeleter {
  void operator()(CURL* easy) const { api().easy_cleanup(easy); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;

// Easy handles attached to the client's multi handle for one batch; detaches and frees them
// all, however it ends. The multi handle (and the connections it keeps alive) stays.
class Batch {
 public:
  explicit Batch(CURLM* multi) : multi_(multi) {}
  ~Batch() {
    for (auto& easy : attached_) api().multi_remove_handle(multi_, easy.get());
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  void add(Easy easy) {
    api().multi_add_handle(multi_, easy.get());
    attached_.push_back(std::move(easy));
  }
  // Runs until every transfer is done; throws for the first that failed without an answer.
  void run() {
    const auto& c = api();
    int running = 1;
    while (running > 0) {
      if (c.multi_perform(multi_, &running) != CURLM_OK) throw TransportError("curl_multi failed");
      int left = 0;
      while (const auto* message = c.multi_info_read(multi_, &left))
        if (message->msg == CURLMSG_DONE && message->data.result != CURLE_OK)
          throw TransportError(c.easy_strerror(message->data.result));
      if (running > 0) c.multi_wait(multi_, nullptr, 0, 1000, nullptr);
    }
  }
  [[nodiscard]] CURL* easy(std::size_t i) const { return attached_[i].get(); }

 private:
  CURLM* multi_;
  std::vector<Easy> attached_;
};

}  // namespace

HttpClient::HttpClient(std::chrono::milliseconds timeout) : timeout_(timeout) {
  multi_ = api().multi_init();
  if (multi_ == nullptr) throw TransportError("curl_multi_init failed");
  api().multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, kParallelTransfers);
}

HttpClient::~HttpClient() {
  if (easy_for_put_ != nullptr) api().easy_cleanup(static_cast<CURL*>(easy_for_put_));
  api().multi_cleanup(static_cast<CURLM*>(multi_));
}

std::vector<HttpResponse> HttpClient::get_many(const std::vector<std::string>& urls) {
  std::vector<HttpResponse> out(urls.size());
  // Each transfer's timeout runs from when it is added, queued or not: a batch is as many as the
  // connections can finish well within one timeout even from a server a continent away.
  constexpr auto kPerBatch = 4 * static_cast<std::size_t>(kParallelTransfers);
  for (std::size_t first = 0; first < urls.size(); first += kPerBatch) {
    const auto last = std::min(urls.size(), first + kPerBatch);
    Batch batch(static_cast<CURLM*>(multi_));
    for (std::size_t i = first; i < last; ++i) {
      Easy easy(api().easy_init());
      if (!easy) throw TransportError("curl_easy_init failed");
      common_options(easy.get(), urls[i], &out[i].body, timeout_);
      batch.add(std::move(easy));
    }
    batch.run();
    for (std::size_t i = first; i < last; ++i) out[i].status = status_of(batch.easy(i - first));
  }
  return out;
}

long HttpClient::put(const std::string& url, std::string_view body) {
  const auto& c = api();
  if (easy_for_put_ == nullptr) easy_for_put_ = c.easy_init();
  auto* easy = static_cast<CURL*>(easy_for_put_);
  if (easy == nullptr) throw TransportError("curl_easy_init failed");
  std::string answer;
  common_options(easy, url, &answer, timeout_);
  curl_slist* headers = c.slist_append(nullptr, "Content-Type: application/json");
  headers = c.slist_append(headers, "Expect:");  // no 100-continue round trip
  c.easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  c.easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "PUT");
  c.easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
  c.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  const auto result = c.easy_perform(easy);
  c.easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
  c.slist_free_all(headers);
  if (result != CURLE_OK) throw TransportError(c.easy_strerror(result));
  return status_of(easy);
}

#else  // built without libcurl's header

HttpClient::HttpClient(std::chrono::milliseconds timeout) : timeout_(timeout) {
  throw TransportError(
      "this build has no HTTP client (libcurl's header was not found when it was built)");
}
HttpClient::~HttpClient() = default;
std::vector<HttpResponse> HttpClient::get_many(const std::vector<std::string>&) { return {}; }
long HttpClient::put(const std::string&, std::string_view) { return 0; }

#endif

}  // namespace util
