#include "src/cli/common.hpp"

#include <csignal>
#include <cstdlib>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/run/result_cache.hpp"
#include "util/ascii.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int /*signal*/) { g_interrupted.store(true); }

}  // namespace

const char* const kExitCodes =
    "Exit codes:\n"
    "  0  no new failures\n"
    "  1  new failures (cells that failed and are not marked xfail)\n"
    "  2  bad arguments or manifest (nothing was compiled)\n"
    "  3  Triton missing or the Python environment is broken\n"
    "  4  internal error of triton-portcheck (please report it)\n"
    "  130  interrupted (Ctrl-C); the finished cells are still reported\n";

std::vector<std::string> split_list(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const auto& item : raw)
    for (const auto& part : util::split(item, ','))
      if (!util::trim(part).empty()) out.emplace_back(util::trim(part));
  return out;
}

std::uint64_t positive_size(const std::string& text, const std::string& flag,
                            const std::string& example) {
  const auto bytes = util::parse_byte_size(text);
  if (!bytes || *bytes == 0)
    throw UsageError(fmt::format("{}: '{}' is not a size such as {}", flag, text, example));
  return *bytes;
}

double parse_timeout(const std::string& text) {
  std::size_t used = 0;
  double seconds = 0;
  try {
    seconds = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // std::stod skips leading blanks: " 2" is no number as typed, in any command.
  if (used == 0 || used != text.size() || util::ascii::is_space(text.front()))
    throw UsageError(fmt::format("--timeout: '{}' is not a number of seconds", text));
  if (const auto problem = timeout_problem(seconds); !problem.empty())
    throw UsageError(fmt::format("--timeout {}: {}", text, problem));
  return seconds;
}

std::uint64_t cache_bound() {
  const char* text = std::getenv("TRITON_PORTCHECK_CACHE_MAX");
  if (text == nullptr || *text == '\0') return kDefaultCacheBytes;
  return positive_size(text, "TRITON_PORTCHECK_CACHE_MAX", "512MiB");
}

const std::atomic<bool>& interrupted() { return g_interrupted; }

void say_warnings(const Report& report, std::set<std::string>* said) {
  std::set<std::string> this_time;
  auto& seen = said != nullptr ? *said : this_time;
  for (const auto& warning : report.warnings)
    if (seen.insert(warning).second)
      fmt::print(stderr, "triton-portcheck: warning: {}\n", util::printable(warning));
}

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace portcheck::cli
