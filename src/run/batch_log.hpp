#pragma once
// The log a batch's process appends as its cells begin and end
// (python/portcheck_worker/cell/batch.py): lines "begun ID T" and "done ID T", T in seconds of
// CLOCK_MONOTONIC, which is the steady clock here too. The cells' own code runs in that process
// and could write into the log: a line that does not parse is skipped, and what a parsed one
// claims is checked by its reader (ForkServerRunner) against what the batch holds.
#include <chrono>
#include <cstddef>
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
