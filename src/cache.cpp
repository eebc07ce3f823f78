#include "src/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "util/fs.hpp"

namespace portcheck {
namespace {

std::map<std::string, double> read_timings(const std::filesystem::path& file) {
  std::map<std::string, double> out;
  try {
    const auto j = nlohmann::json::parse(util::read_file(file));
    for (const auto& [k, v] : j.items())
      if (v.is_number()) out[k] = v.get<double>();
  } catch (const std::exception&) {
    // Missing or damaged: past times are only a scheduling hint.
  }
  return out;
}

}  // namespace

std::filesystem::path portcheck_home() {
  if (const char* home = std::getenv("TRITON_PORTCHECK_HOME"); home && *home) return home;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "triton-portcheck";
  const char* user_home = std::getenv("HOME");
  return std::filesystem::path(user_home && *user_home ? user_home : "/tmp") / ".cache" /
         "triton-portcheck";
}

ResultCache::ResultCache(std::filesystem::path root, std::uint64_t max_bytes)
    : root_(std::move(root)), max_bytes_(max_bytes) {}

std::filesystem::path ResultCache::path_for(const std::string& key) const {
  return root_ / "results" / key.substr(0, 2) / (key + ".json");
}

std::optional<nlohmann::json> ResultCache::load(const std::string& key) {
  const auto path = path_for(key);
  try {
    auto entry = nlohmann::json::parse(util::read_file(path));
    if (entry.value("key", "") != key) return std::nullopt;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used now
    return entry;
  } catch (const std::exception&) {
    return std::nullopt;  // absent, evicted meanwhile, or damaged: a miss
  }
}

void ResultCache::store(const std::string& key, const nlohmann::json& entry) {
  const auto path = path_for(key);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  try {
    util::atomic_write_file(path, entry.dump());
  } catch (const std::exception&) {
    // A read-only or full cache costs speed, never a run.
  }
}

ResultCache::Stats ResultCache::stats() const {
  Stats s;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root_ / "results", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".json") continue;
    ++s.entries;
    s.bytes += it->file_size(ec);
  }
  return s;
}

void ResultCache::evict_to_fit() {
  struct File {
    std::filesystem::path path;
    std::filesystem::file_time_type used;
    std::uint64_t bytes;
  };
  std::vector<File> files;
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root_ / "results", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    File f{it->path(), it->last_write_time(ec), it->file_size(ec)};
    total += f.bytes;
    files.push_back(std::move(f));
  }
  if (total <= max_bytes_) return;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.used < b.used; });
  const std::uint64_t target = max_bytes_ / 10 * 9;
  for (const auto& f : files) {
    if (total <= target) break;
    if (std::filesystem::remove(f.path, ec)) total -= f.bytes;
  }
}

std::size_t ResultCache::clean() {
  const auto before = stats().entries;
  std::error_code ec;
  std::filesystem::remove_all(root_ / "results", ec);
  return before;
}

CellTimings::CellTimings(std::filesystem::path file)
    : file_(std::move(file)), known_(read_timings(file_)) {}

std::optional<double> CellTimings::get(const std::string& key) const {
  if (const auto it = known_.find(key); it != known_.end()) return it->second;
  return std::nullopt;
}

void CellTimings::save() {
  if (updates_.empty()) return;
  auto merged = read_timings(file_);
  for (const auto& [k, v] : updates_) merged[k] = v;
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  try {
    util::atomic_write_file(file_, nlohmann::json(merged).dump());
  } catch (const std::exception&) {
    // Only a scheduling hint.
  }
}

}  // namespace portcheck
