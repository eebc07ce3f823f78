#include "src/run/cache_runs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>

#include "util/fs.hpp"
#include "util/iso_time.hpp"
#include "util/strings.hpp"
#include "util/unique_fd.hpp"

namespace portcheck {
namespace {

constexpr std::size_t kLinesKept = 50;
constexpr std::uintmax_t kTrimAbove = 64U << 10U;
// More than any run counts (cells, bytes, seconds), and small enough to print as an integer.
constexpr double kMostCounted = 1e15;

std::filesystem::path runs_file(const std::filesystem::path& cache_root) {
  return cache_root / "runs.jsonl";
}

std::vector<std::string> lines_of(const std::filesystem::path& file) {
  std::vector<std::string> out;
  try {
    std::istringstream in(util::read_file(file));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(line);
  } catch (const std::exception&) {
    // None yet.
  }
  return out;
}

void trim(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::file_size(file, ec) <= kTrimAbove || ec) return;
  auto lines = lines_of(file);
  if (lines.size() > kLinesKept)
    lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(kLinesKept));
  try {
    util::atomic_write_file(file, util::join(lines, "\n") + "\n");
  } catch (const std::exception&) {
    // Only statistics.
  }
}

// A line as record_cache_run writes it: counters as numbers, the time and the remote as text.
// Anything else (a hand edit, a disk error, another tool) is skipped: these are statistics.
bool well_formed(const nlohmann::json& record) {
  if (!record.is_object()) return false;
  static const auto counters = CacheCounters{}.to_json();
  for (const auto& [key, value] : record.items()) {
    const bool ok = counters.contains(key) ? value.is_number() && value.get<double>() >= 0 &&
                                                 value.get<double>() <= kMostCounted
                    : key == "time"     ? value.is_string()
                    : key == "remote"   ? value.is_string() || value.is_null()
                    : key == "readonly" ? value.is_boolean()
                                        : true;  // a field of a later version: not read
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void record_cache_run(const std::filesystem::path& cache_root, const CacheCounters& counters,
                      const std::optional<RemoteCacheSettings>& remote) {
  auto record = counters.to_json();
  record["time"] = util::iso_time_utc(std::chrono::system_clock::now());
  record["remote"] = remote ? nlohmann::json(remote->url.shown()) : nlohmann::json(nullptr);
  record["readonly"] = remote && remote->readonly;
  const auto line = record.dump() + "\n";
  std::error_code ec;
  std::filesystem::create_directories(cache_root, ec);
  const auto file = runs_file(cache_root);
  const util::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd.valid()) return;  // a read-only home: statistics are not worth failing for
  if (::write(fd.get(), line.data(), line.size()) < 0) return;
  trim(file);
}

std::vector<nlohmann::json> recent_cache_runs(const std::filesystem::path& cache_root,
                                              std::size_t count) {
  std::vector<nlohmann::json> out;
  for (const auto& line : lines_of(runs_file(cache_root))) {
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (well_formed(record)) out.push_back(std::move(record));
  }
  if (out.size() > count) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(count));
  return out;
}

}  // namespace portcheck
