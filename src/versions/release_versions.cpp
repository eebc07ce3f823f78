#include "src/versions/release_versions.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "util/text_cursor.hpp"

namespace portcheck {
namespace {

// Release numbers, then pre-release kind (dev < a < b < rc < final), then its number, then post.
auto version_key(const std::string& v) {
  std::vector<long> release;
  int kind = 4;  // final
  long pre = 0;
  long post = -1;
  std::size_t i = v.find('!') == std::string::npos ? 0 : v.find('!') + 1;
  auto number = [&](long& out) {
    out = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') out = out * 10 + (v[i++] - '0');
  };
  while (i < v.size()) {
    long n = 0;
    number(n);
    release.push_back(n);
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() && v[i + 1] >= '0' && v[i + 1] <= '9') {
      ++i;
      continue;
    }
    break;
  }
  while (!release.empty() && release.back() == 0) release.pop_back();
  const auto rest = v.substr(i);
  if (rest.starts_with("rc")) kind = 3;
  if (rest.starts_with("b")) kind = 2;
  if (rest.starts_with("a")) kind = 1;
  if (rest.starts_with(".dev")) kind = 0;
  if (kind >= 1 && kind <= 3) {
    i += kind == 3 ? 2 : 1;
    number(pre);
  }
  if (const auto p = v.find(".post", i); p != std::string::npos) {
    i = p + 5;
    number(post);
  }
  return std::make_tuple(release, kind, pre, post, v);
}

}  // namespace

// Canonical PEP 440 public versions only: one spelling per release, so one folder per release,
// and no character that could make a path ('/', '.', '..' alone are rejected by the leading digit):
// [N!]N(.N)*[{a|b|rc}N][.postN][.devN], scanned by hand (util/text_cursor.hpp).
bool is_release_version(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  util::TextCursor c(s);
  if (!c.take_digits()) return false;
  if (c.take("!") && !c.take_digits()) return false;  // that was the epoch
  while (c.take_number_after('.')) {
  }
  if ((c.take("a") || c.take("b") || c.take("rc")) && !c.take_digits()) return false;
  if (c.take(".post") && !c.take_digits()) return false;
  if (c.take(".dev") && !c.take_digits()) return false;
  return c.done();
}

void validate_version(const std::string& version) {
  if (!is_release_version(version))
    throw UsageError(fmt::format(
        "'{}' is not a Triton release version: expected a PEP 440 release such as 3.8.0 or "
        "3.9.0rc1",
        version));
}

void validate_compilable_release(const std::string& version, const std::string& what) {
  validate_version(version);
  if (release_less(version, kOldestRelease))
    throw UsageError(fmt::format(
        "{}: Triton {} is older than {}, the oldest release triton-portcheck compiles with (2.x "
        "has no backend plug-ins, so it cannot compile for a GPU it does not run on); use {} or "
        "later",
        what, version, kOldestRelease, kOldestRelease));
}

bool same_release(const std::string& a, const std::string& b) {
  if (!is_release_version(a) || !is_release_version(b)) return false;
  const auto [release_a, kind_a, pre_a, post_a, text_a] = version_key(a);
  const auto [release_b, kind_b, pre_b, post_b, text_b] = version_key(b);
  return std::tie(release_a, kind_a, pre_a, post_a) == std::tie(release_b, kind_b, pre_b, post_b);
}

bool release_less(const std::string& a, const std::string& b) {
  return version_key(a) < version_key(b);
}

bool is_prerelease(const std::string& version) {
  return std::get<1>(version_key(version)) != 4;  // the kind of a final release
}

std::vector<std::string> use_current_for_installed(const std::vector<std::string>& labels,
                                                   const std::string& current_version,
                                                   std::vector<std::string>* replaced) {
  std::vector<std::string> out;
  for (const auto& label : labels) {
    const bool is_current = label != "current" && same_release(label, current_version);
    if (is_current && replaced != nullptr) replaced->push_back(label);
    const auto& use = is_current ? std::string("current") : label;
    if (std::find(out.begin(), out.end(), use) == out.end()) out.push_back(use);
  }
  return out;
}

}  // namespace portcheck
