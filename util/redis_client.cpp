#include "util/redis_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#if PORTCHECK_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

namespace util {

#if PORTCHECK_HAVE_HIREDIS
namespace {

// MGET of this many keys is a reply of a few MiB at most (entries are a few KiB each).
constexpr std::size_t kKeysPerBatch = 256;

using Clock = std::chrono::steady_clock;
using Command = std::vector<std::string_view>;

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

std::string error_text(const redisReply& reply) { return std::string(reply.str, reply.len); }

// The commands in Redis's wire format (RESP arrays of bulk strings).
std::string encoded(const std::vector<Command>& commands) {
  std::string out;
  for (const auto& argv : commands) {
    out += "*" + std::to_string(argv.size()) + "\r\n";
    for (const auto arg : argv) {
      out += "$" + std::to_string(arg.size()) + "\r\n";
      out.append(arg);
      out += "\r\n";
    }
  }
  return out;
}

// Waits until the socket is ready for `events`, or throws once `deadline` has passed.
void wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw TransportError("no answer within the timeout");
    pollfd p{fd, events, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready > 0) return;
    if (ready == 0) throw TransportError("no answer within the timeout");
    if (errno != EINTR) throw TransportError(std::string("poll: ") + std::strerror(errno));
  }
}

void send_all(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    wait_for(fd, POLLOUT, deadline);
    const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n < 0) throw TransportError(std::string("send: ") + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Reads until the parser has `count` replies: all of them before `deadline`, and at most
// `max_bytes` read, so a server that drips or floods is cut off at the bound, not per read.
std::vector<Reply> read_replies(redisContext& c, std::size_t count, Clock::time_point deadline,
                                std::size_t max_bytes) {
  std::vector<Reply> replies;
  std::size_t bytes_read = 0;
  char buffer[64 * 1024];
  while (replies.size() < count) {
    void* raw = nullptr;
    if (redisReaderGetReply(c.reader, &raw) != REDIS_OK)
      throw TransportError(std::string("not Redis's protocol: ") + c.reader->errstr);
    if (raw != nullptr) {
      replies.emplace_back(static_cast<redisReply*>(raw));
      continue;
    }
    wait_for(c.fd, POLLIN, deadline);
    const auto n = ::recv(c.fd, buffer, std::min(sizeof buffer, max_bytes - bytes_read + 1), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n < 0) throw TransportError(std::string("recv: ") + std::strerror(errno));
    if (n == 0) throw TransportError("the server closed the connection");
    bytes_read += static_cast<std::size_t>(n);
    if (bytes_read > max_bytes)
      throw TransportError("an answer larger than " + std::to_string(max_bytes >> 20) + " MiB");
    redisReaderFeed(c.reader, buffer, static_cast<std::size_t>(n));
  }
  return replies;
}

// One round trip, the commands pipelined: every reply read (so the connection stays in step),
// then the first error reply thrown as the server's refusal.
std::vector<Reply> round_trip(redisContext& c, const std::vector<Command>& commands,
                              std::chrono::milliseconds timeout, std::size_t max_bytes) {
  const auto deadline = Clock::now() + timeout;
  send_all(c.fd, encoded(commands), deadline);
  auto replies = read_replies(c, commands.size(), deadline, max_bytes);
  for (const auto& reply : replies)
    if (reply->type == REDIS_REPLY_ERROR) throw RejectedError(error_text(*reply));
  return replies;
}

Reply round_trip(redisContext& c, const Command& command, std::chrono::milliseconds timeout,
                 std::size_t max_bytes) {
  return std::move(round_trip(c, std::vector<Command>{command}, timeout, max_bytes).front());
}

}  // namespace

bool redis_supported() { return true; }

RedisClient::RedisClient(RedisAddress address, std::chrono::milliseconds timeout,
                         std::size_t max_answer_bytes)
    : address_(std::move(address)), timeout_(timeout), max_answer_bytes_(max_answer_bytes) {}

RedisClient::~RedisClient() { drop(); }

void RedisClient::drop() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

template <typename Request>
auto RedisClient::guarded(Request request) {
  try {
    return request();
  } catch (const TransportError&) {
    drop();
    throw;
  }
}

redisContext* RedisClient::connection() {
  if (context_ != nullptr) return context_;
  const timeval tv{static_cast<time_t>(timeout_.count() / 1000),
                   static_cast<suseconds_t>((timeout_.count() % 1000) * 1000)};
  context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, tv);
  if (context_ == nullptr) throw TransportError("cannot allocate a Redis connection");
  if (context_->err != 0) {
    std::string why = context_->errstr;
    drop();
    throw TransportError(why);
  }
  // Our reads and writes poll() against one deadline per answer; a blocking socket could still
  // block a whole timeout inside one of them.
  ::fcntl(context_->fd, F_SETFL, ::fcntl(context_->fd, F_GETFL) | O_NONBLOCK);
  std::vector<Command> hello;
  if (!address_.password.empty()) {
    if (address_.user.empty())
      hello.push_back({"AUTH", address_.password});
    else
      hello.push_back({"AUTH", address_.user, address_.password});
  }
  const auto db = std::to_string(address_.db);
  if (address_.db != 0) hello.push_back({"SELECT", db});
  try {
    if (!hello.empty()) round_trip(*context_, hello, timeout_, max_answer_bytes_);
  } catch (...) {
    drop();  // refused or cut off: not a connection to use unauthenticated
    throw;
  }
  return context_;
}

std::vector<std::optional<std::string>> RedisClient::get_many(
    const std::vector<std::string>& keys) {
  return guarded([&] {
    std::vector<std::optional<std::string>> out;
    out.reserve(keys.size());
    for (std::size_t first = 0; first < keys.size(); first += kKeysPerBatch) {
      const auto last = std::min(keys.size(), first + kKeysPerBatch);
      Command argv{"MGET"};
      argv.insert(argv.end(), keys.begin() + static_cast<std::ptrdiff_t>(first),
                  keys.begin() + static_cast<std::ptrdiff_t>(last));
      const auto reply = round_trip(*connection(), argv, timeout_, max_answer_bytes_);
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != last - first)
        throw TransportError("MGET did not answer one value per key");
      for (std::size_t i = 0; i < reply->elements; ++i) {
        const auto* value = reply->element[i];
        if (value->type == REDIS_REPLY_STRING)
          out.emplace_back(std::string(value->str, value->len));
        else
          out.emplace_back(std::nullopt);
      }
    }
    return out;
  });
}

void RedisClient::set_many(const std::vector<std::pair<std::string, std::string>>& items) {
  guarded([&] {
    std::vector<Command> commands;
    commands.reserve(items.size());
    for (const auto& [key, value] : items) commands.push_back({"SET", key, value});
    round_trip(*connection(), commands, timeout_, max_answer_bytes_);
  });
}

void RedisClient::ping() {
  guarded([&] { round_trip(*connection(), Command{"PING"}, timeout_, max_answer_bytes_); });
}

#else  // built without hiredis: the class exists, every request says why it cannot work

bool redis_supported() { return false; }
RedisClient::RedisClient(RedisAddress address, std::chrono::milliseconds timeout,
                         std::size_t max_answer_bytes)
    : address_(std::move(address)), timeout_(timeout), max_answer_bytes_(max_answer_bytes) {}
RedisClient::~RedisClient() = default;
void RedisClient::drop() {}
redisContext* RedisClient::connection() {
  throw TransportError("this build has no Redis client (hiredis was not found when it was built)");
}
std::vector<std::optional<std::string>> RedisClient::get_many(const std::vector<std::string>&) {
  connection();
  return {};
}
void RedisClient::set_many(const std::vector<std::pair<std::string, std::string>>&) {
  connection();
}
void RedisClient::ping() { connection(); }

#endif

}  // namespace util
