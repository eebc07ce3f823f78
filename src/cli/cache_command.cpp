// `cache stats|clean`: the result cache under $TRITON_PORTCHECK_HOME, and the shared one.
#include <cstdint>

#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/core/remote_url.hpp"
#include "src/run/cache_runs.hpp"
#include "src/run/remote_store.hpp"
#include "src/run/result_cache.hpp"
#include "src/versions/environments.hpp"
#include "util/remote_error.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {
namespace {

constexpr std::size_t kRunsShown = 10;

// The shared cache named by --cache-url or $TRITON_PORTCHECK_CACHE_URL: does it answer?
void print_remote(const std::string& text) {
  std::string problem;
  const auto url = parse_remote_url(text, &problem);
  if (!url) throw UsageError(fmt::format("cache URL '{}': {}", redact_url(text), problem));
  const auto store = open_remote_store(*url, std::chrono::milliseconds(2000));
  try {
    store->ping();
    fmt::print("remote:  {} (answers)\n", url->shown());
  } catch (const std::exception& error) {
    fmt::print("remote:  {} (does not answer: {})\n", url->shown(), url->masked(error.what()));
  }
}

// One line per recent check: where its cells came from and what the remote cost.
void print_recent_runs(const std::filesystem::path& root) {
  const auto runs = recent_cache_runs(root, kRunsShown);
  if (runs.empty()) return;
  fmt::print("\nlast {} checks:\n  {:<20}  {:>6}  {:>7}  {:>6}  {:>7}  {:>7}  {:>6}  {}\n",
             runs.size(), "when (UTC)", "local", "remote", "missed", "stored", "shared", "errors",
             "remote cache");
  for (const auto& r : runs) {
    // recent_cache_runs kept well-formed lines only; their text is still escaped.
    const auto n = [&](const char* name) { return r.value(name, std::int64_t{0}); };
    std::string remote = r.value("remote", nlohmann::json()).is_string()
                             ? util::printable(r["remote"].get<std::string>())
                             : std::string("-");
    if (r.value("readonly", false)) remote += " (read-only)";
    if (n("remote_rejected") > 0)
      remote += fmt::format(", {} entries refused", n("remote_rejected"));
    fmt::print("  {:<20}  {:>6}  {:>7}  {:>6}  {:>7}  {:>7}  {:>6}  {}\n",
               util::printable(r.value("time", std::string("?"))), n("local_hits"),
               n("remote_hits"), n("misses"), n("stored"), n("remote_stored"), n("remote_errors"),
               remote);
  }
}

int run_cache_stats(const ResultCache& cache, const std::string& remote) {
  const auto stats = cache.stats();
  fmt::print(
      "cache:   {}\nentries: {}\nsize:    {} of {} (least recently used entries are evicted beyond "
      "it)\n",
      cache.root().string(), stats.entries, util::format_bytes(stats.bytes),
      util::format_bytes(cache.max_bytes()));
  if (!remote.empty() && remote != "none") print_remote(remote);
  print_recent_runs(cache.root());
  return exit_code::ok;
}

int run_cache_clean(ResultCache& cache) {
  const auto removed = cache.clean();
  fmt::print("removed {} cached results from {}\n", removed, cache.root().string());
  // What killed `env add` runs left (a half-made environment is over a gigabyte) goes too.
  if (const auto leftovers = sweep_abandoned_environments(); leftovers > 0)
    fmt::print("removed {} folders that interrupted `env add` runs left in {}\n", leftovers,
               environments_root().string());
  return exit_code::ok;
}

}  // namespace

Command add_cache_command(CLI::App& app) {
  auto* cache = app.add_subcommand("cache", "Inspect or empty the result cache");
  cache->require_subcommand(1);
  auto* stats = cache->add_subcommand(
      "stats", "Entries, size and location of the result cache, and the last checks' hits");
  auto remote = std::make_shared<std::string>();
  if (const char* from_env = std::getenv("TRITON_PORTCHECK_CACHE_URL")) *remote = from_env;
  stats->add_option("--cache-url", *remote,
                    "Also ask this shared cache whether it answers (default: "
                    "$TRITON_PORTCHECK_CACHE_URL)");
  cache->add_subcommand("clean", "Remove every cached result (the shared cache is left alone)");
  // require_subcommand(1): stats, or else clean.
  return {cache, [stats, remote] {
            ResultCache results(portcheck_home() / "cache", cache_bound());
            return *stats ? run_cache_stats(results, *remote) : run_cache_clean(results);
          }};
}

}  // namespace portcheck::cli
