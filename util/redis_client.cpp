#include "util/redis_client.hpp"

#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#if PORTCHECK_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

namespace util {

#if PORTCHECK_HAVE_HIREDIS
namespace {

// MGET of this many keys is a reply of a few MiB at most (entries are a few KiB each).
constexpr std::size_t kKeysPerBatch = 256;

timeval to_timeval(std::chrono::milliseconds timeout) {
  return {static_cast<time_t>(timeout.count() / 1000),
          static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
}

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

std::string error_text(const redisReply& reply) { return std::string(reply.str, reply.len); }

}  // namespace

bool redis_supported() { return true; }

RedisClient::RedisClient(RedisAddress address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}

RedisClient::~RedisClient() { drop(); }

void RedisClient::drop() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

namespace {

// hiredis reports a read or write that timed out as the bare EAGAIN of the socket.
std::string transport_problem(const redisContext& context) {
  if (context.err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK))
    return "no answer within the timeout";
  return context.errstr[0] != '\0' ? context.errstr : "no reply";
}

// Sends one command; a reply of type error is the server saying no.
Reply command(redisContext* context, const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  Reply reply(static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(args.size()), args.data(), lengths.data())));
  if (!reply) throw TransportError(transport_problem(*context));
  if (reply->type == REDIS_REPLY_ERROR) throw RejectedError(error_text(*reply));
  return reply;
}

}  // namespace

redisContext* RedisClient::connection() {
  if (context_ != nullptr) return context_;
  const auto tv = to_timeval(timeout_);
  context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, tv);
  if (context_ == nullptr) throw TransportError("cannot allocate a Redis connection");
  if (context_->err != 0) {
    std::string why = context_->errstr;
    drop();
    throw TransportError(why);
  }
  redisSetTimeout(context_, tv);  // every later read and write is bounded too
  try {
    if (!address_.password.empty()) {
      if (address_.user.empty())
        command(context_, {"AUTH", address_.password});
      else
        command(context_, {"AUTH", address_.user, address_.password});
    }
    if (address_.db != 0) command(context_, {"SELECT", std::to_string(address_.db)});
  } catch (...) {
    drop();
    throw;
  }
  return context_;
}

std::vector<std::optional<std::string>> RedisClient::get_many(
    const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> out;
  out.reserve(keys.size());
  try {
    for (std::size_t first = 0; first < keys.size(); first += kKeysPerBatch) {
      const auto last = std::min(keys.size(), first + kKeysPerBatch);
      std::vector<std::string> argv{"MGET"};
      argv.insert(argv.end(), keys.begin() + static_cast<std::ptrdiff_t>(first),
                  keys.begin() + static_cast<std::ptrdiff_t>(last));
      const auto reply = command(connection(), argv);
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
  } catch (const TransportError&) {
    drop();
    throw;
  }
  return out;
}

void RedisClient::set_many(const std::vector<std::pair<std::string, std::string>>& items) {
  try {
    auto* context = connection();
    for (const auto& [key, value] : items) {
      const char* args[] = {"SET", key.data(), value.data()};
      const std::size_t lengths[] = {3, key.size(), value.size()};
      if (redisAppendCommandArgv(context, 3, args, lengths) != REDIS_OK)
        throw TransportError(transport_problem(*context));
    }
    std::string refused;  // read every reply, so that the connection stays in step
    for (std::size_t i = 0; i < items.size(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(context, &raw) != REDIS_OK)
        throw TransportError(transport_problem(*context));
      const Reply reply(static_cast<redisReply*>(raw));
      if (reply && reply->type == REDIS_REPLY_ERROR && refused.empty())
        refused = error_text(*reply);
    }
    if (!refused.empty()) throw RejectedError(refused);
  } catch (const TransportError&) {
    drop();
    throw;
  }
}

void RedisClient::ping() {
  try {
    command(connection(), {"PING"});
  } catch (const TransportError&) {
    drop();
    throw;
  }
}

#else  // built without hiredis: the class exists, every request says why it cannot work

bool redis_supported() { return false; }
RedisClient::RedisClient(RedisAddress address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}
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
