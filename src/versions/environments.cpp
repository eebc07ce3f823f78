#include "src/versions/environments.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <regex>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/result_cache.hpp"
#include "src/versions/pip_steps.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/unique_fd.hpp"

namespace portcheck {
namespace fs = std::filesystem;
namespace {

// Canonical PEP 440 public versions only: one spelling per release, so one folder per release,
// and no character that could make a path ('/', '.', '..' alone are rejected by the leading digit).
const std::regex& version_pattern() {
  static const std::regex re(
      R"(^([0-9]+!)?[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$)");
  return re;
}

bool is_version(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::regex_match(s, version_pattern());
}

std::string now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Apparent size of every regular file below `dir`; symlinks are not followed (a venv's
// bin/python points at the base interpreter).
std::uint64_t folder_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_symlink(e2)) continue;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return total;
}

bool is_complete(const fs::path& dir) {
  return ::access((dir / "bin" / "python").c_str(), X_OK) == 0 &&
         fs::is_regular_file(dir / kEnvironmentMarker);
}

std::optional<nlohmann::json> read_marker(const fs::path& dir) {
  try {
    return nlohmann::json::parse(util::read_file(dir / kEnvironmentMarker));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// An exclusive flock on <root>/<version>.lock, released on destruction. The file is kept: removing
// it would let a waiter and a newcomer lock different inodes.
class VersionLock {
 public:
  explicit VersionLock(const fs::path& file) {
    fd_.reset(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd_.valid())
      throw EnvironmentError(
          fmt::format("cannot open the lock file {}: {}", file.string(), std::strerror(errno)));
    while (::flock(fd_.get(), LOCK_EX) != 0) {
      if (errno != EINTR)
        throw EnvironmentError(
            fmt::format("cannot lock {}: {}", file.string(), std::strerror(errno)));
    }
  }

 private:
  util::UniqueFd fd_;  // closing it releases the lock
};

// mkdtemp'd folder under `root` named <prefix>XXXXXX, removed on destruction unless released.
class StagingDir {
 public:
  StagingDir(const fs::path& root, const std::string& prefix) {
    std::string tmpl = (root / (prefix + "XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) == nullptr)
      throw EnvironmentError(
          fmt::format("cannot create a folder in {}: {}", root.string(), std::strerror(errno)));
    path_ = name.data();
    ::chmod(path_.c_str(), 0755);  // mkdtemp makes it 0700; an environment is for everyone
  }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  ~StagingDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

std::string temp_prefix(const std::string& version) { return ".tmp-" + version + "-"; }

// Removes what an interrupted add or remove of `version` left behind. Only called under the
// version's lock, so nothing live can match.
void sweep_stale(const fs::path& root, const std::string& version) {
  const auto prefix = temp_prefix(version);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) {
      std::error_code e2;
      fs::remove_all(entry.path(), e2);
    }
  }
}

// ---- zip central directory: the uncompressed size of a wheel's contents ----

std::uint64_t le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool read_at(std::ifstream& in, std::uint64_t offset, std::size_t n,
             std::vector<unsigned char>& out) {
  out.resize(n);
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount()) == n;
}

}  // namespace

// Sums the uncompressed sizes in a zip's central directory (zip64 included). nullopt when the
// file is not a readable zip.
std::optional<std::uint64_t> zip_uncompressed_bytes(const fs::path& zip) {
  std::ifstream in(zip, std::ios::binary);
  if (!in) return std::nullopt;
  std::error_code ec;
  const std::uint64_t size = fs::file_size(zip, ec);
  if (ec || size < 22) return std::nullopt;
  const std::uint64_t tail_len = std::min<std::uint64_t>(size, 65535 + 22);
  std::vector<unsigned char> tail;
  if (!read_at(in, size - tail_len, tail_len, tail)) return std::nullopt;
  std::optional<std::uint64_t> eocd;
  for (std::uint64_t i = tail_len - 22 + 1; i-- > 0;) {
    if (le(&tail[i], 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (!eocd) return std::nullopt;
  const unsigned char* e = &tail[*eocd];
  std::uint64_t entries = le(e + 10, 2);
  std::uint64_t cd_size = le(e + 12, 4);
  std::uint64_t cd_offset = le(e + 16, 4);
  if (entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    if (*eocd < 20) return std::nullopt;
    const unsigned char* loc = &tail[*eocd - 20];
    if (le(loc, 4) != 0x07064b50) return std::nullopt;
    std::vector<unsigned char> rec;
    if (!read_at(in, le(loc + 8, 8), 56, rec) || le(rec.data(), 4) != 0x06064b50)
      return std::nullopt;
    entries = le(&rec[32], 8);
    cd_size = le(&rec[40], 8);
    cd_offset = le(&rec[48], 8);
  }
  if (cd_offset + cd_size > size) return std::nullopt;
  std::vector<unsigned char> cd;
  if (!read_at(in, cd_offset, cd_size, cd)) return std::nullopt;
  std::uint64_t total = 0;
  std::size_t pos = 0;
  for (std::uint64_t n = 0; n < entries; ++n) {
    if (pos + 46 > cd.size() || le(&cd[pos], 4) != 0x02014b50) return std::nullopt;
    std::uint64_t uncompressed = le(&cd[pos + 24], 4);
    const std::size_t name_len = le(&cd[pos + 28], 2);
    const std::size_t extra_len = le(&cd[pos + 30], 2);
    const std::size_t comment_len = le(&cd[pos + 32], 2);
    if (pos + 46 + name_len + extra_len + comment_len > cd.size()) return std::nullopt;
    if (uncompressed == 0xFFFFFFFF) {
      // The zip64 extra field (id 1) holds the real size first.
      std::size_t x = pos + 46 + name_len;
      const std::size_t x_end = x + extra_len;
      while (x + 4 <= x_end) {
        const auto id = le(&cd[x], 2);
        const std::size_t len = le(&cd[x + 2], 2);
        if (id == 1 && len >= 8 && x + 4 + 8 <= x_end) {
          uncompressed = le(&cd[x + 4], 8);
          break;
        }
        x += 4 + len;
      }
    }
    total += uncompressed;
    pos += 46 + name_len + extra_len + comment_len;
  }
  return total;
}

namespace {

// A venv's scripts carry the absolute path they were made at in their shebangs (and activate
// scripts in a variable); point them at the final folder before the rename.
void relocate_scripts(const fs::path& bin, const fs::path& from, const fs::path& to) {
  const std::string old_path = from.string();
  const std::string new_path = to.string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(bin, ec)) {
    std::error_code e2;
    if (entry.is_symlink(e2) || !entry.is_regular_file(e2)) continue;
    if (entry.file_size(e2) > (1U << 20)) continue;
    std::string text;
    try {
      text = util::read_file(entry.path());
    } catch (const std::exception&) {
      continue;
    }
    if (text.find(old_path) == std::string::npos) continue;
    std::string out;
    std::size_t start = 0;
    for (auto hit = text.find(old_path); hit != std::string::npos;
         hit = text.find(old_path, start)) {
      out.append(text, start, hit - start);
      out += new_path;
      start = hit + old_path.size();
    }
    out.append(text, start);
    const auto perms = fs::status(entry.path(), e2).permissions();
    util::atomic_write_file(entry.path(), out);
    fs::permissions(entry.path(), perms, e2);
  }
}

// Release numbers, then pre-release kind (dev < a < b < rc < final), then its number, then post.
auto version_key(const std::string& v) {
  std::vector<long> release;
  int kind = 4;  // final
  long pre = 0;
  long post = -1;
  std::size_t i = v.find('!') == std::string::npos ? 0 : v.find('!') + 1;
  auto number = [&](long& out) {
    out = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') out = out * 10 + (v[i++] - '0');
  };
  while (i < v.size()) {
    long n = 0;
    number(n);
    release.push_back(n);
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() && v[i + 1] >= '0' && v[i + 1] <= '9') {
      ++i;
      continue;
    }
    break;
  }
  while (!release.empty() && release.back() == 0) release.pop_back();
  const auto rest = v.substr(i);
  if (rest.starts_with("rc")) kind = 3;
  if (rest.starts_with("b")) kind = 2;
  if (rest.starts_with("a")) kind = 1;
  if (rest.starts_with(".dev")) kind = 0;
  if (kind >= 1 && kind <= 3) {
    i += kind == 3 ? 2 : 1;
    number(pre);
  }
  if (const auto p = v.find(".post", i); p != std::string::npos) {
    i = p + 5;
    number(post);
  }
  return std::make_tuple(release, kind, pre, post, v);
}

}  // namespace

void validate_version(const std::string& version) {
  if (!is_version(version))
    throw UsageError(fmt::format(
        "'{}' is not a Triton release version: expected a PEP 440 release such as 3.8.0 or "
        "3.9.0rc1",
        version));
}

fs::path environments_root() { return portcheck_home() / "envs"; }

fs::path environment_dir(const std::string& version) {
  validate_version(version);
  return environments_root() / version;
}

std::optional<fs::path> environment_python(const std::string& version) {
  const auto dir = environment_dir(version);
  if (!is_complete(dir)) return std::nullopt;
  return dir / "bin" / "python";
}

namespace {

constexpr std::chrono::seconds kVenvTimeout(300);
constexpr std::chrono::seconds kPipTimeout(1800);
// pip's network settings: a dead index fails in about a minute and a half, not fifteen.
const std::vector<std::string>& pip_network_flags() {
  static const std::vector<std::string> flags = {"--disable-pip-version-check", "--timeout", "30",
                                                 "--retries", "2"};
  return flags;
}

void validate_with_packages(const std::vector<std::string>& with_packages) {
  for (const auto& pkg : with_packages)
    if (pkg.empty() || pkg.starts_with("-"))
      throw UsageError(
          fmt::format("--with '{}': expected a package requirement such as numpy or "
                      "numpy==2.1, not a pip option",
                      pkg));
}

// An environment that is already complete: the sizes its marker recorded, and its own.
EnvAddReport already_present(const std::string& version, const fs::path& dir) {
  EnvAddReport report;
  report.version = version;
  report.path = dir;
  report.already_present = true;
  if (const auto marker = read_marker(dir)) {
    report.wheel_bytes = marker->value("wheel_bytes", std::uint64_t{0});
    report.expected_bytes = marker->value("expected_bytes", std::uint64_t{0});
  }
  report.actual_bytes = folder_bytes(dir);
  touch_environment(version);
  return report;
}

// 1. The venv (with pip, via ensurepip).
void create_venv(const std::string& python, const fs::path& venv, const fs::path& logs) {
  const auto step = run_step({python, "-m", "venv", venv.string()}, logs, "venv", kVenvTimeout);
  if (!step.ok())
    throw EnvironmentError(
        fmt::format("`{} -m venv` failed: {}", python, failure_reason(step, kVenvTimeout)));
}

// 2. Asks the index for the wheel: this is where an unknown version or no network shows.
fs::path download_wheel(const std::string& venv_python, const std::string& version,
                        const fs::path& downloads, const fs::path& logs) {
  std::error_code ec;
  fs::create_directories(downloads, ec);
  std::vector<std::string> download = {venv_python, "-m",        "pip",
                                       "download",  "--no-deps", "--only-binary",
                                       ":all:",     "--dest",    downloads.string()};
  download.insert(download.end(), pip_network_flags().begin(), pip_network_flags().end());
  download.push_back("triton==" + version);
  const auto step = run_step(download, logs, "download", kPipTimeout);
  if (!step.ok()) {
    const auto offered =
        step.outcome.how == Termination::exited ? offered_versions(step.stderr_text) : std::nullopt;
    if (offered && !offered->empty() &&
        std::find(offered->begin(), offered->end(), version) == offered->end())
      throw UsageError(fmt::format(
          "triton {} is not on the package index for this platform and Python; it offers: {}",
          version, util::join(*offered, ", ")));
    throw EnvironmentError(fmt::format("cannot download triton=={} with pip: {}", version,
                                       failure_reason(step, kPipTimeout)));
  }
  fs::path wheel;
  for (const auto& entry : fs::directory_iterator(downloads, ec))
    if (entry.path().extension() == ".whl") wheel = entry.path();
  if (wheel.empty())
    throw EnvironmentError(fmt::format("pip download triton=={} produced no wheel in {}", version,
                                       downloads.string()));
  return wheel;
}

// 3. Installs from the downloaded file (so it is fetched once), plus the extra packages.
void install_wheel(const std::string& venv_python, const std::string& version,
                   const fs::path& wheel, const std::vector<std::string>& with_packages,
                   const fs::path& logs) {
  std::vector<std::string> install = {venv_python, "-m", "pip", "install", "--quiet"};
  install.insert(install.end(), pip_network_flags().begin(), pip_network_flags().end());
  install.push_back(wheel.string());
  install.insert(install.end(), with_packages.begin(), with_packages.end());
  const auto step = run_step(install, logs, "install", kPipTimeout);
  if (!step.ok())
    throw EnvironmentError(
        fmt::format("pip install triton=={}{} failed: {}", version,
                    with_packages.empty() ? "" : " " + util::join(with_packages, " "),
                    failure_reason(step, kPipTimeout)));
}

// 4. It must import; this also tells the Python and Triton versions for the marker.
std::pair<std::string, std::string> check_import(const std::string& venv_python,
                                                 const std::string& version, const fs::path& logs) {
  const auto step = run_step({venv_python, "-c",
                              "import platform, triton; print(platform.python_version()); "
                              "print(triton.__version__)"},
                             logs, "check", kVenvTimeout);
  if (!step.ok())
    throw EnvironmentError(fmt::format("triton {} was installed but does not import: {}", version,
                                       failure_reason(step, kVenvTimeout)));
  const auto lines = util::split_lines(step.stdout_text);
  return {lines.empty() ? "" : std::string(util::trim(lines[0])),
          lines.size() < 2 ? "" : std::string(util::trim(lines[1]))};
}

// 5. Marker, relocation, rename: the folder appears under its final name complete.
void publish(StagingDir& staging, const fs::path& final_dir, const nlohmann::json& marker) {
  const auto& venv = staging.path();
  relocate_scripts(venv / "bin", venv, final_dir);
  util::atomic_write_file(venv / kEnvironmentMarker, marker.dump(2) + "\n");
  std::error_code ec;
  fs::rename(venv, final_dir, ec);
  if (ec)
    throw EnvironmentError(
        fmt::format("cannot move {} to {}: {}", venv.string(), final_dir.string(), ec.message()));
  staging.release();
}

}  // namespace

EnvAddReport add_environment(const std::string& version,
                             const std::vector<std::string>& with_packages,
                             const std::string& base_python) {
  validate_version(version);
  validate_with_packages(with_packages);
  const auto python = resolve_python(base_python);
  const auto root = environments_root();
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw EnvironmentError(fmt::format("cannot create {}: {}", root.string(), ec.message()));
  const auto final_dir = root / version;

  VersionLock lock(root / (version + ".lock"));
  if (is_complete(final_dir)) return already_present(version, final_dir);
  sweep_stale(root, version);
  if (fs::exists(final_dir)) fs::remove_all(final_dir, ec);  // a folder that never completed

  StagingDir work(root, temp_prefix(version) + "work-");  // downloads and logs
  StagingDir staging(root, temp_prefix(version));         // the venv itself
  const auto venv_python = (staging.path() / "bin" / "python").string();
  create_venv(python, staging.path(), work.path());
  const std::uint64_t fresh_venv_bytes = folder_bytes(staging.path());
  const auto downloads = work.path() / "wheels";
  const auto wheel = download_wheel(venv_python, version, downloads, work.path());

  EnvAddReport report;
  report.version = version;
  report.path = final_dir;
  report.wheel_bytes = fs::file_size(wheel, ec);
  // Estimate: what the fresh venv holds plus every file of the wheel unpacked. It leaves out the
  // bytecode pip compiles and any --with packages and dependencies.
  report.expected_bytes =
      fresh_venv_bytes + zip_uncompressed_bytes(wheel).value_or(report.wheel_bytes);
  install_wheel(venv_python, version, wheel, with_packages, work.path());
  fs::remove_all(downloads, ec);
  const auto [python_version, triton_version] = check_import(venv_python, version, work.path());

  const auto created = now_iso8601();
  publish(staging, final_dir,
          {{"version", version},
           {"triton_version", triton_version},
           {"python", python_version},
           {"base_python", python},
           {"with", with_packages},
           {"created", created},
           {"last_used", created},
           {"wheel", wheel.filename().string()},
           {"wheel_bytes", report.wheel_bytes},
           {"expected_bytes", report.expected_bytes}});
  report.actual_bytes = folder_bytes(final_dir);
  return report;
}

std::vector<EnvInfo> list_environments() {
  std::vector<EnvInfo> out;
  const auto root = environments_root();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const auto name = entry.path().filename().string();
    std::error_code e2;
    if (!is_version(name) || !entry.is_directory(e2) || !is_complete(entry.path())) continue;
    EnvInfo info;
    info.version = name;
    info.path = entry.path();
    if (const auto marker = read_marker(entry.path())) {
      info.python_version = marker->value("python", "");
      info.last_used = marker->value("last_used", "");
    }
    info.bytes = folder_bytes(entry.path());
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const EnvInfo& a, const EnvInfo& b) {
    return version_key(a.version) < version_key(b.version);
  });
  return out;
}

void touch_environment(const std::string& version) {
  const auto dir = environment_dir(version);
  if (!is_complete(dir)) return;
  auto marker = read_marker(dir).value_or(nlohmann::json::object());
  if (!marker.is_object()) marker = nlohmann::json::object();
  marker["last_used"] = now_iso8601();
  try {
    util::atomic_write_file(dir / kEnvironmentMarker, marker.dump(2) + "\n");
  } catch (const std::exception&) {
    // A read-only cache must not fail a check.
  }
}

bool remove_environment(const std::string& version) {
  const auto dir = environment_dir(version);
  const auto root = environments_root();
  std::error_code ec;
  if (!fs::exists(root, ec)) return false;
  VersionLock lock(root / (version + ".lock"));
  sweep_stale(root, version);
  if (!fs::exists(fs::symlink_status(dir, ec))) return false;
  // Renamed aside first, so no reader ever sees a half-removed environment as complete.
  std::string tmpl = (root / (temp_prefix(version) + "rm-XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr)
    throw EnvironmentError(fmt::format("cannot remove {}: {}", dir.string(), std::strerror(errno)));
  const fs::path aside = fs::path(name.data()) / version;
  fs::rename(dir, aside, ec);
  if (ec) throw EnvironmentError(fmt::format("cannot remove {}: {}", dir.string(), ec.message()));
  fs::remove_all(name.data(), ec);
  if (ec) throw EnvironmentError(fmt::format("cannot remove {}: {}", dir.string(), ec.message()));
  return true;
}

}  // namespace portcheck
