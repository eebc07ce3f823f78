#pragma once
// The storage behind a shared result cache: one opaque value per key, on a Redis server or an
// HTTP server that takes GET and PUT (nginx with WebDAV, any object store with a plain HTTP
// API), the same layouts ccache's remote storage uses. What is stored, and when to trust it, is
// run/tiered_cache.hpp's business.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/remote_url.hpp"

namespace portcheck {

// Every request throws util::TransportError (no answer in time, refused, reset) or
// util::RejectedError (the server answered no: full, forbidden, read-only).
class RemoteStore {
 public:
  virtual ~RemoteStore() = default;
  // One value per key, in order; nullopt: the store has none.
  virtual std::vector<std::optional<std::string>> get_many(
      const std::vector<std::string>& keys) = 0;
  // Stores every (key, value) in as few round trips as the protocol allows; `acknowledged` counts
  // those the store confirmed, also when it throws (the others may or may not be stored).
  virtual void put_many(const std::vector<std::pair<std::string, std::string>>& items,
                        std::size_t& acknowledged) = 0;
  // A request that succeeds on a working store whatever it holds.
  virtual void ping() = 0;
};

// Connects lazily: opening never touches the network. Redis keys are "triton-portcheck:<key>";
// HTTP objects are <base>/<key>.
std::unique_ptr<RemoteStore> open_remote_store(const RemoteUrl& url,
                                               std::chrono::milliseconds timeout);

}  // namespace portcheck
