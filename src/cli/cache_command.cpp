// `cache stats|clean`: the result cache under $TRITON_PORTCHECK_HOME.
#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/run/result_cache.hpp"
#include "src/versions/environments.hpp"
#include "util/strings.hpp"

namespace portcheck::cli {
namespace {

int run_cache_stats(const ResultCache& cache) {
  const auto stats = cache.stats();
  fmt::print(
      "cache:   {}\nentries: {}\nsize:    {} of {} (least recently used entries are evicted beyond "
      "it)\n",
      cache.root().string(), stats.entries, util::format_bytes(stats.bytes),
      util::format_bytes(cache.max_bytes()));
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
  auto* stats = cache->add_subcommand("stats", "Entries, size and location of the result cache");
  cache->add_subcommand("clean", "Remove every cached result");
  // require_subcommand(1): stats, or else clean.
  return {cache, [stats] {
            ResultCache results(portcheck_home() / "cache", cache_bound());
            return *stats ? run_cache_stats(results) : run_cache_clean(results);
          }};
}

}  // namespace portcheck::cli
