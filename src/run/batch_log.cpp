#include "src/run/batch_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "src/run/worker_channels.hpp"
#include "util/strings.hpp"

namespace portcheck {

bool parse_batch_mark(const std::string& line, BatchMark& mark) {
  const auto words = util::split(line, ' ');
  if (words.size() != 4) return false;
  if (words[0] == channels::kBatchBegun)
    mark.kind = BatchMark::Kind::begun;
  else if (words[0] == channels::kBatchDone)
    mark.kind = BatchMark::Kind::done;
  else
    return false;
  const auto digits = [](const std::string& word) {
    return !word.empty() && word.size() <= 19 &&
           std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(words[1]) || !digits(words[3])) return false;
  char* end = nullptr;
  const auto id = std::strtoull(words[1].c_str(), &end, 10);
  mark.figure = std::strtoull(words[3].c_str(), &end, 10);
  const double seconds = std::strtod(words[2].c_str(), &end);
  if (words[2].empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0) return false;
  mark.id = static_cast<std::size_t>(id);
  // Later than now is not a time the process could have seen: a forged line says it is now.
  const auto now = std::chrono::steady_clock::now();
  const auto at = std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(seconds)));
  mark.at = std::min(at, now);
  return true;
}

BatchLogReader::BatchLogReader(const std::filesystem::path& path) : path_(path) {
  util::UniqueFd created(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  fd_ = util::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
}

std::vector<BatchMark> BatchLogReader::read_new() {
  std::vector<BatchMark> marks;
  if (!fd_.valid()) return marks;
  char chunk[4096];
  ssize_t n = 0;
  while ((n = ::read(fd_.get(), chunk, sizeof chunk)) > 0) partial_.append(chunk, n);
  std::size_t start = 0;
  for (auto newline = partial_.find('\n'); newline != std::string::npos;
       newline = partial_.find('\n', start)) {
    BatchMark mark;
    if (parse_batch_mark(partial_.substr(start, newline - start), mark)) marks.push_back(mark);
    start = newline + 1;
  }
  partial_.erase(0, start);
  // A cell's code that writes without end must not grow this without bound.
  if (partial_.size() > 4096) partial_.clear();
  return marks;
}

}  // namespace portcheck
