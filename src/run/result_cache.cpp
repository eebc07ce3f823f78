#include "src/run/result_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "src/run/cache_entry_schema.hpp"
#include "util/bounded_json.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

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

// Bumped whenever what an entry holds changes; an entry of another schema is a silent miss.
constexpr int kEntrySchema = 2;

std::string checksum_of(nlohmann::json entry) {
  entry.erase("checksum");
  return util::sha1_hex(entry.dump());
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

bool fits_limits(const nlohmann::json& entry, double timeout_s, std::uint64_t max_rss) {
  if (timeout_s > 0 && entry.value("wall_s", 0.0) >= timeout_s) return false;
  const auto& peak = entry.value("peak_rss_bytes", nlohmann::json());
  return max_rss == 0 || (peak.is_number() && peak.get<double>() <= static_cast<double>(max_rss));
}

ResultCache::ResultCache(std::filesystem::path root, std::uint64_t max_bytes)
    : root_(std::move(root)), max_bytes_(max_bytes) {}

std::filesystem::path ResultCache::path_for(const std::string& key) const {
  return root_ / "results" / key.substr(0, 2) / (key + ".json");
}

std::optional<nlohmann::json> ResultCache::check_entry(const std::string& text,
                                                       const std::string& key,
                                                       std::string* problem) {
  problem->clear();
  if (text.size() > kMaxEntryBytes) {
    *problem = fmt::format("larger than {}", util::format_bytes(kMaxEntryBytes));
    return std::nullopt;
  }
  nlohmann::json entry;
  try {
    // Bounded: a shared store may hold anything, and nesting 100,000 deep would overflow the
    // stack in the first walk over it (the checksum's dump).
    entry = util::parse_json_bounded(text);
  } catch (const util::JsonInputError& error) {
    *problem = std::string("not JSON: ") + error.what();
    return std::nullopt;
  }
  if (entry.is_object() && entry.contains("schema") && entry["schema"] != kEntrySchema)
    return std::nullopt;  // another version's entry: a plain miss
  if (entry.is_object() && !entry.contains("schema") && !entry.contains("checksum"))
    return std::nullopt;  // written before entries were sealed: a plain miss too
  if (!entry.is_object())
    *problem = "not a JSON object";
  else if (!entry.contains("checksum") || entry["checksum"] != checksum_of(entry))
    *problem = "its checksum does not match its content";
  else if (entry.value("key", nlohmann::json()) != key)
    *problem = "it holds another key";
  else
    *problem = cache_entry_problem(entry);
  if (!problem->empty()) return std::nullopt;
  return entry;
}

std::optional<nlohmann::json> ResultCache::load(const std::string& key) {
  const auto path = path_for(key);
  std::string text;
  try {
    text = util::read_file(path);
  } catch (const std::exception&) {
    return std::nullopt;  // absent, or evicted meanwhile: a plain miss
  }
  std::string problem;
  auto entry = check_entry(text, key, &problem);
  if (!problem.empty()) note_damage(path, problem);
  if (!entry) return std::nullopt;
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used now
  return entry;
}

bool ResultCache::contains(const std::string& key) const {
  std::error_code ec;
  return std::filesystem::is_regular_file(path_for(key), ec);
}

void ResultCache::note_damage(const std::filesystem::path& path, const std::string& problem) {
  // Once per run: a damaged cache costs a recompile, and the user should know why, not 500 times.
  if (damaged_++ == 0)
    std::fprintf(stderr,
                 "triton-portcheck: ignoring a damaged cache entry %s (%s); damaged entries are "
                 "compiled again and replaced\n",
                 path.c_str(), problem.c_str());
}

std::string ResultCache::seal(const nlohmann::json& entry) {
  auto sealed = entry;
  sealed["schema"] = kEntrySchema;
  sealed["checksum"] = checksum_of(sealed);
  return sealed.dump();
}

std::string ResultCache::store(const std::string& key, const nlohmann::json& entry) {
  auto text = seal(entry);
  store_sealed(key, text);
  return text;
}

void ResultCache::store_sealed(const std::string& key, const std::string& text) {
  const auto path = path_for(key);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  try {
    util::atomic_write_file(path, text);
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
    : file_(std::move(file)), known_(read_timings(file_)) {
  // Keys are "row|target|version"; a row's name may itself hold "|", so split from the end.
  for (const auto& [key, seconds] : known_) {
    const auto last = key.rfind('|');
    const auto before =
        last == std::string::npos || last == 0 ? std::string::npos : key.rfind('|', last - 1);
    if (before == std::string::npos) continue;
    auto& [sum, count] = suffix_sums_[key.substr(before + 1)];
    sum += seconds;
    ++count;
  }
}

std::optional<double> CellTimings::mean_of_suffix(const std::string& suffix) const {
  const auto it = suffix_sums_.find(suffix);
  if (it == suffix_sums_.end() || it->second.second == 0) return std::nullopt;
  return it->second.first / static_cast<double>(it->second.second);
}

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
