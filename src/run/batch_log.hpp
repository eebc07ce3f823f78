#pragma once
// The log a batch's leader appends as it forks each cell and sees it end
// (python/portcheck_worker/cell/batch.py): lines "begun ID T THREADS" and "done ID T MAXRSS", T
// in seconds of CLOCK_MONOTONIC, which is the steady clock here too; THREADS the leader's threads
// when it forked the cell (a fork hazard), MAXRSS the cell's peak resident bytes (wait4). The
// cells' own code could write into the log: a line that does not parse is skipped, and what a
// parsed one claims is checked by its reader (ForkServerRunner) against what the batch holds.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "util/unique_fd.hpp"

namespace portcheck {

struct BatchMark {
  enum class Kind { begun, done };
  Kind kind = Kind::begun;
  std::size_t id = 0;
  std::chrono::steady_clock::time_point at;
  std::uint64_t figure = 0;  // THREADS of a begun mark, MAXRSS of a done one
};

// One line of the log, or nothing when it is not one.
[[nodiscard]] bool parse_batch_mark(const std::string& line, BatchMark& mark);

class BatchLogReader {
 public:
  // Creates the empty log (the process appends to it) and keeps it open for reading.
  explicit BatchLogReader(const std::filesystem::path& path);
  // The marks whole lines added since the last call hold, in order.
  std::vector<BatchMark> read_new();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  util::UniqueFd fd_;
  std::string partial_;  // a line not yet ended
};

}  // namespace portcheck
