#include "src/core/remote_url.hpp"

#include <vector>

#include <charconv>
#include <string_view>

namespace portcheck {
namespace {

bool parse_int(std::string_view text, int low, int high, int* out) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high)
    return false;
  *out = value;
  return true;
}

bool fail(std::string* problem, const char* why) {
  *problem = why;
  return false;
}

// "[[USER:]PASSWORD@]HOST[:PORT]" of a redis:// URL into `url`.
bool parse_redis_authority(std::string_view authority, RemoteUrl& url, std::string* problem) {
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const auto credentials = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    if (const auto colon = credentials.find(':'); colon != std::string_view::npos) {
      url.user = std::string(credentials.substr(0, colon));
      url.password = std::string(credentials.substr(colon + 1));
    } else {
      url.password = std::string(credentials);
    }
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {  // [::1]:6379
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return fail(problem, "an IPv6 host without its ']'");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return fail(problem, "text after the IPv6 host");
      port = authority.substr(close + 2);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return fail(problem, "no host");
  url.host = std::string(host);
  if (!port.empty() && !parse_int(port, 1, 65535, &url.port))
    return fail(problem, "the port is not a number from 1 to 65535");
  return true;
}

std::optional<RemoteUrl> parse_redis(std::string_view rest, RemoteUrl url, std::string* problem) {
  auto authority = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    const auto db = rest.substr(slash + 1);
    if (!db.empty() && !parse_int(db, 0, 1 << 20, &url.db)) {
      *problem = "the database after the host is not a number (redis://HOST[:PORT][/DB])";
      return std::nullopt;
    }
  }
  if (!parse_redis_authority(authority, url, problem)) return std::nullopt;
  return url;
}

}  // namespace

std::string redact_url(const std::string& text) {
  const auto scheme_end = text.find("://");
  if (scheme_end == std::string::npos) return text;
  const auto authority = scheme_end + 3;
  const auto path = text.find('/', authority);
  const auto at = text.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at == std::string::npos || at < authority) return text;
  const auto colon = text.find(':', authority);
  const auto secret = colon != std::string::npos && colon < at ? colon + 1 : authority;
  return text.substr(0, secret) + "***" + text.substr(at);
}

std::string RemoteUrl::shown() const { return redact_url(text); }

std::string RemoteUrl::masked(std::string message) const {
  // The password as written in the URL (percent-encoded, perhaps) and as parsed.
  const auto redacted = redact_url(text);
  const auto stars = redacted.find("***");
  std::vector<std::string> secrets{password};
  if (stars != std::string::npos && redacted != text)
    secrets.push_back(text.substr(stars, text.size() - redacted.size() + 3));
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    for (auto at = message.find(secret); at != std::string::npos; at = message.find(secret, at + 3))
      message.replace(at, secret.size(), "***");
  }
  return message;
}

std::optional<RemoteUrl> parse_remote_url(const std::string& text, std::string* problem) {
  RemoteUrl url;
  url.text = text;
  const std::string_view view(text);
  if (view.starts_with("redis://")) {
    url.kind = RemoteUrl::Kind::redis;
    return parse_redis(view.substr(8), std::move(url), problem);
  }
  if (view.starts_with("http://") || view.starts_with("https://")) {
    url.kind = RemoteUrl::Kind::http;
    const auto host_start = view.find("://") + 3;
    if (host_start >= view.size() || view[host_start] == '/') {
      *problem = "no host";
      return std::nullopt;
    }
    url.base = text;
    while (url.base.ends_with('/')) url.base.pop_back();
    return url;
  }
  if (view.starts_with("rediss://") || view.starts_with("unix:")) {
    *problem =
        "only redis:// (no TLS) and http(s):// caches are supported; reach a TLS Redis "
        "through an http(s):// server or a tunnel";
    return std::nullopt;
  }
  *problem = "expected redis://HOST[:PORT][/DB] or http(s)://HOST/PATH";
  return std::nullopt;
}

}  // namespace portcheck
