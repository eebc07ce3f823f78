#pragma once
// What `check` is asked to do: the command line's choices, read by every stage of the pipeline.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/report.hpp"

namespace portcheck {

enum class Isolation { fork, process };
// compile: predict, then compile everything; skip: do not compile predicted failures;
// only: compile nothing, the matrix from predictions alone.
enum class StaticMode { compile, skip, only };

// The names the command line takes and the report's options block shows, one table each.
std::string_view to_string(Isolation isolation);
std::string_view to_string(StaticMode mode);
std::optional<Isolation> parse_isolation(std::string_view name);
std::optional<StaticMode> parse_static_mode(std::string_view name);

// The folder a flag names for the run's files (--save-ir DIR, export -o DIR), created if missing.
// Throws UsageError naming the flag when it is something else (a file, /dev/null), cannot be
// created or is not writable: checked before any compile, so no cell is lost to it.
void prepare_output_folder(const std::filesystem::path& dir, std::string_view flag);

// The fork server's memory allowance when --worker-max-rss is not given: a quarter of the
// memory this process may use (the machine's, or its container's limit), at least 4 GiB. Half of it
// holds the zygotes, each of which holds a real library's import (torch and transformers: about 1
// GB), so a fixed 4 GiB fitted two on a 128 GiB machine and retired them over and over.
std::uint64_t default_worker_max_rss_bytes();

// What a reproducer's file says of each cell that writes one, keyed by the row's display name and
// the target's name (CheckOptions::repro).
using ReproducerFacts = std::map<std::pair<std::string, std::string>, nlohmann::json>;

struct CheckOptions {
  std::filesystem::path manifest = "portcheck.toml";
  bool demo = false;
  std::vector<std::string> targets;  // overrides the manifest's
  std::string python;
  std::optional<double> timeout_s;
  std::optional<std::uint64_t> max_rss_bytes;
  std::size_t jobs = 0;   // 0: one per core
  bool progress = false;  // a live progress line on stderr
  Isolation isolation = Isolation::fork;
  bool use_cache = true;
  std::uint64_t cache_max_bytes = 512ULL << 20;
  // A shared remote cache (check/remote_cache_choice.hpp): --cache-url, "none" to use none;
  // unset: $TRITON_PORTCHECK_CACHE_URL, else the manifest's [defaults] cache_url.
  std::optional<std::string> cache_url;
  bool cache_readonly = false;            // --cache-readonly
  std::optional<double> cache_timeout_s;  // --cache-timeout
  std::uint64_t worker_max_rss_bytes = default_worker_max_rss_bytes();
  std::optional<ShardInfo> shard;
  StaticMode static_mode = StaticMode::compile;
  std::vector<std::string> only_rows;               // empty: every row of the manifest
  std::optional<std::filesystem::path> export_dir;  // export: binaries and descriptors go here
  std::vector<std::string> triton;  // environments: "current", "3.8.0"; empty: the manifest's
  bool inherit_site = true;         // version environments see the invoking site-packages
  std::optional<std::filesystem::path> save_ir_dir;  // --save-ir: every stage's IR, for diff --ir
  // repro: the cells named here write their reproducer instead of compiling, and no other cell
  // runs; each one's facts are what its file's header says of it (its verdict, the command) and
  // --shrink's time bound.
  ReproducerFacts repro;
  bool launch_limits_warn = false;  // --launch-limits warn: report, but do not fail
  bool reduce = false;  // --reduce: one row of each group compiled for all (check/reduce.hpp)
  // A target this release cannot compile for is its cells' verdict, not a UsageError (always so
  // with several releases; bisect wants it with one).
  bool unsupported_targets_are_cells = false;
};

}  // namespace portcheck
