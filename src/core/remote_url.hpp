#pragma once
// The address of a shared result cache, as --cache-url, $TRITON_PORTCHECK_CACHE_URL and the
// manifest's [defaults] cache_url write it. Parsing only: no network (run/remote_store.hpp).
#include <optional>
#include <string>

namespace portcheck {

struct RemoteUrl {
  enum class Kind { redis, http };
  Kind kind = Kind::redis;
  std::string text;  // as given
  // redis://[[USER:]PASSWORD@]HOST[:PORT][/DB]
  std::string host;
  int port = 6379;
  int db = 0;
  std::string user;
  std::string password;
  // http(s)://[USER:PASSWORD@]HOST[:PORT]/PATH: the folder that holds one object per key,
  // without a trailing slash (curl takes the credentials from the URL itself).
  std::string base;

  // For messages and reports: the URL with any password replaced by "***".
  [[nodiscard]] std::string shown() const;
  // A server's or a library's message with whatever the URL's password spells replaced by "***"
  // wherever it appears (a Redis may answer "WRONGPASS invalid password '...'", a client may
  // quote the URL).
  [[nodiscard]] std::string masked(std::string message) const;
};

// Any text given as a cache URL, parsed or not, with the password of its credentials replaced
// by "***" (everything between "://" and "@" after the first colon, or all of it without one):
// what messages may print.
std::string redact_url(const std::string& text);

// The parsed URL, or nullopt with `problem` saying what is wrong with it.
std::optional<RemoteUrl> parse_remote_url(const std::string& text, std::string* problem);

}  // namespace portcheck
