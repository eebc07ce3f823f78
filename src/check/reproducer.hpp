#pragma once
// A reproducer file (`triton-portcheck repro`) run as its user runs it, `python FILE`, and its
// outcome judged as a cell is: the same classification, fingerprint and launch limits, so that
// "it reproduces" means the fingerprint the cell had. `repro` checks the file it wrote, `repro
// --verify` a file handed on, `bisect --repro` a file under each release.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "src/core/cell.hpp"
#include "src/core/target.hpp"

namespace portcheck {

// What the file's `# portcheck-repro: {...}` line says the cell had.
struct ReproducerHeader {
  std::string fingerprint;
  std::string kind;
  std::string stage;
  Target target;
  std::string triton_version;
  std::optional<double> time_limit_s;          // the cell ran out of this much time
  std::optional<std::uint64_t> max_rss_bytes;  // the cell's processes together exceeded this
};

// The header of `file`; throws UsageError naming the file, the line and the key when it is not a
// reproducer this tool wrote, or when a limit in it is not one the supervisor can enforce (a
// time_limit_s of -5, "2" or 1e300 once ran the file with no limit at all).
ReproducerHeader read_reproducer(const std::filesystem::path& file);

// How a run of a reproducer compares with what it recorded.
enum class Reproduction { same, differs, fixed };

struct ReproducerRun {
  CellResult cell;  // kernel = the file's name, triton = `label`
  Reproduction reproduction = Reproduction::fixed;
};

// Runs `python FILE` in an empty folder with `python` (an environment holding Triton), under the
// recorded time limit (else `default_timeout_s`) and memory limit (the sum of its processes' RSS,
// as a cell's), nothing of it outliving the call; `data` holds
// the launch-limit and known-failure tables. `interrupted` set (Ctrl-C) stops it: the caller
// looks at the flag, not at the verdict.
ReproducerRun run_reproducer(const std::filesystem::path& file, const ReproducerHeader& header,
                             const std::string& python, const std::string& label,
                             const std::filesystem::path& data, double default_timeout_s,
                             const std::atomic<bool>* interrupted = nullptr);

// "reproduces d156103061eb", "no longer reproduces: compiles", "fails differently: ..."
std::string describe(const ReproducerRun& run, const ReproducerHeader& header);

}  // namespace portcheck
