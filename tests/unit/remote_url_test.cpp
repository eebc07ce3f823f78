// Cache URLs: every form users write (ccache's and redis-cli's), and one clear problem for the
// rest.
#include "src/core/remote_url.hpp"

#include <gtest/gtest.h>

namespace portcheck {
namespace {

RemoteUrl parsed(const std::string& text) {
  std::string problem;
  const auto url = parse_remote_url(text, &problem);
  EXPECT_TRUE(url.has_value()) << text << ": " << problem;
  return url.value_or(RemoteUrl{});
}

std::string problem_of(const std::string& text) {
  std::string problem;
  EXPECT_FALSE(parse_remote_url(text, &problem).has_value()) << text;
  return problem;
}

TEST(RemoteUrl, RedisFormsTakeTheirDefaults) {
  const auto plain = parsed("redis://cache.internal");
  EXPECT_EQ(plain.kind, RemoteUrl::Kind::redis);
  EXPECT_EQ(plain.host, "cache.internal");
  EXPECT_EQ(plain.port, 6379);
  EXPECT_EQ(plain.db, 0);
  EXPECT_TRUE(plain.password.empty());

  const auto full = parsed("redis://ci:s3cret@10.0.0.5:6380/3");
  EXPECT_EQ(full.host, "10.0.0.5");
  EXPECT_EQ(full.port, 6380);
  EXPECT_EQ(full.db, 3);
  EXPECT_EQ(full.user, "ci");
  EXPECT_EQ(full.password, "s3cret");

  const auto password_only = parsed("redis://s3cret@localhost/");
  EXPECT_TRUE(password_only.user.empty());
  EXPECT_EQ(password_only.password, "s3cret");

  const auto v6 = parsed("redis://[::1]:7000");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 7000);
}

TEST(RemoteUrl, HttpKeepsItsPathWithoutTheTrailingSlash) {
  const auto url = parsed("https://user:pw@cache.example.com/triton/");
  EXPECT_EQ(url.kind, RemoteUrl::Kind::http);
  EXPECT_EQ(url.base, "https://user:pw@cache.example.com/triton");
}

TEST(RemoteUrl, PasswordsAreNeverShown) {
  EXPECT_EQ(parsed("redis://ci:s3cret@host:1/2").shown(), "redis://ci:***@host:1/2");
  EXPECT_EQ(parsed("redis://s3cret@host").shown(), "redis://***@host");
  EXPECT_EQ(parsed("https://user:pw@h/p").shown(), "https://user:***@h/p");
  EXPECT_EQ(parsed("http://h:8080/p").shown(), "http://h:8080/p");
  EXPECT_EQ(parsed("http://user@h/p").shown(), "http://***@h/p");
  // Text that does not parse is redacted too: error messages quote it.
  EXPECT_EQ(redact_url("redis://:s3cret@host:99999"), "redis://:***@host:99999");
  EXPECT_EQ(redact_url("s3://key:secret@bucket/path"), "s3://key:***@bucket/path");
  EXPECT_EQ(redact_url("http://h/p@q"), "http://h/p@q");  // an @ in the path is no credential
  EXPECT_EQ(redact_url("no scheme:secret@x"), "no scheme:secret@x");
}

TEST(RemoteUrl, MistakesSayWhatIsWrong) {
  EXPECT_NE(problem_of("redis://host:99999").find("port"), std::string::npos);
  EXPECT_NE(problem_of("redis://host:abc").find("port"), std::string::npos);
  EXPECT_NE(problem_of("redis://host/x").find("database"), std::string::npos);
  EXPECT_NE(problem_of("redis://").find("no host"), std::string::npos);
  EXPECT_NE(problem_of("redis://[::1").find("IPv6"), std::string::npos);
  EXPECT_NE(problem_of("http:///path").find("no host"), std::string::npos);
  EXPECT_NE(problem_of("rediss://host").find("TLS"), std::string::npos);
  EXPECT_NE(problem_of("s3://bucket").find("expected redis://"), std::string::npos);
  EXPECT_NE(problem_of("").find("expected"), std::string::npos);
}

}  // namespace
}  // namespace portcheck

namespace portcheck {
namespace {

// Issue 28: a Redis that echoes the password in its error got it printed.
TEST(RemoteUrl, MessagesAreMaskedWhereverThePasswordAppears) {
  std::string problem;
  const auto redis = parse_remote_url("redis://u:s3cret@h:1/2", &problem);
  ASSERT_TRUE(redis) << problem;
  EXPECT_EQ(redis->masked("WRONGPASS invalid password 's3cret' (s3cret)"),
            "WRONGPASS invalid password '***' (***)");
  EXPECT_EQ(redis->masked("no password here"), "no password here");
  const auto http = parse_remote_url("https://me:p%40ss@store/x", &problem);
  ASSERT_TRUE(http) << problem;
  EXPECT_EQ(http->masked("cannot reach https://me:p%40ss@store/x"),
            "cannot reach https://me:***@store/x");
  const auto bare = parse_remote_url("redis://h", &problem);
  ASSERT_TRUE(bare) << problem;
  EXPECT_EQ(bare->masked("anything"), "anything");
}

}  // namespace
}  // namespace portcheck
