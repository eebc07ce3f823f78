#include "src/versions/environments.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/result_cache.hpp"
#include "src/versions/pip_steps.hpp"
#include "src/versions/venv_relocation.hpp"
#include "util/file_lock.hpp"
#include "util/fs.hpp"
#include "util/iso_time.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"
#include "util/text_cursor.hpp"
#include "util/unique_fd.hpp"
#include "util/zip.hpp"

namespace portcheck {
namespace fs = std::filesystem;
namespace {

// Of the releases pip lists, those this tool compiles with (pip lists 2.x too, which
// validate_compilable_release refuses): a list to choose from must not offer what is refused.
std::vector<std::string> compilable(std::vector<std::string> offered) {
  std::erase_if(offered, [](const std::string& v) {
    return !is_release_version(v) || release_less(v, kOldestRelease);
  });
  return offered;
}

std::string offer_text(const std::vector<std::string>& offered) {
  const auto usable = compilable(offered);
  return usable.empty() ? fmt::format("none ({} or later)", kOldestRelease)
                        : util::join(usable, ", ");
}

std::string now_iso8601() { return util::iso_time_utc(std::chrono::system_clock::now()); }

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

// The lock of one version's add and remove (util/file_lock.hpp), as an EnvironmentError.
util::FileLock version_lock(const fs::path& root, const std::string& version,
                            util::FileLock::Wait wait = util::FileLock::Wait::yes) {
  try {
    return util::FileLock(root / (version + ".lock"), wait);
  } catch (const std::system_error& e) {
    throw EnvironmentError(e.what());
  }
}

// A folder <root>/<prefix>XXXXXX, removed unless released: on the environments' file system, so
// that the finished venv is renamed into place. Readable by everyone, as an environment is.
util::TempDir staging_dir(const fs::path& root, const std::string& prefix) {
  try {
    util::TempDir dir(root, prefix);
    ::chmod(dir.path().c_str(), 0755);  // mkdtemp makes it 0700
    return dir;
  } catch (const util::WriteError& e) {
    throw EnvironmentError(
        fmt::format("cannot create a folder in {}: {}", root.string(), std::strerror(e.error)));
  }
}

std::string temp_prefix(const std::string& version) { return ".tmp-" + version + "-"; }

// Removes what an interrupted add or remove of `version` left behind; returns how many folders.
// Only called under the version's lock, so nothing live can match.
std::size_t sweep_stale(const fs::path& root, const std::string& version) {
  const auto prefix = temp_prefix(version);
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) {
      std::error_code e2;
      fs::remove_all(entry.path(), e2);
      removed += e2 ? 0 : 1;
    }
  }
  return removed;
}

// The version a leftover belongs to: "<version>.lock" or ".tmp-<version>-..." (a version has no
// '-'); empty for anything else.
std::string leftover_version(const std::string& name) {
  std::string version;
  if (name.ends_with(".lock")) version = name.substr(0, name.size() - 5);
  if (name.starts_with(".tmp-")) version = name.substr(5, name.find('-', 5) - 5);
  return is_release_version(version) ? version : std::string();
}

}  // namespace

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

// What add_environment reports for an environment that is already there.
EnvAddReport already_present(const std::string& version, const fs::path& dir) {
  EnvAddReport report;
  report.version = version;
  report.path = dir;
  report.already_present = true;
  if (const auto marker = read_marker(dir)) {
    report.wheel_bytes = marker->value("wheel_bytes", std::uint64_t{0});
    report.expected_bytes = marker->value("expected_bytes", std::uint64_t{0});
  }
  report.actual_bytes = util::folder_bytes(dir);
  touch_environment(version);
  return report;
}

constexpr std::chrono::seconds kVenvTimeout(300);
constexpr std::chrono::seconds kPipTimeout(1800);

// Every pip step's network settings.
const std::vector<std::string>& pip_network_options() {
  static const std::vector<std::string> options = {"--disable-pip-version-check", "--timeout", "30",
                                                   "--retries", "2"};
  return options;
}

// add_environment's steps, in two staging folders under <root> (removed unless the build
// completes): a work folder for downloads and logs, and the venv itself, which the last step
// renames into place. Each step throws EnvironmentError naming what failed.
class EnvironmentBuild {
 public:
  EnvironmentBuild(const fs::path& root, const std::string& version,
                   const std::vector<std::string>& with_packages, const std::string& python)
      : version_(version),
        with_packages_(with_packages),
        python_(python),
        work_(staging_dir(root, temp_prefix(version) + "work-")),
        staging_(staging_dir(root, temp_prefix(version))),
        venv_(staging_.path()),
        venv_python_((venv_ / "bin" / "python").string()),
        death_watch_(step_marker(), {work_.path(), staging_.path()}) {}

  EnvAddReport run(const fs::path& final_dir) {
    EnvAddReport report;
    report.version = version_;
    report.path = final_dir;
    make_venv();
    const std::uint64_t fresh_venv_bytes = util::folder_bytes(venv_);
    const auto wheel = download_wheel();
    std::error_code ec;
    report.wheel_bytes = fs::file_size(wheel, ec);
    // Estimate: what the fresh venv holds plus every file of the wheel unpacked. It leaves out
    // the bytecode pip compiles and any --with packages and dependencies.
    report.expected_bytes =
        fresh_venv_bytes + util::zip_uncompressed_bytes(wheel).value_or(report.wheel_bytes);
    install(wheel);
    finish(final_dir, wheel.filename().string(), report);
    report.actual_bytes = util::folder_bytes(final_dir);
    return report;
  }

 private:
  // 1. The venv, without pip where the invoking Python's pip can install into it (PipRunner);
  // else with its own, from ensurepip, as `python -m venv` makes it.
  void make_venv() {
    pip_ = pip_runner_for(python_, venv_python_, work_.path());
    std::vector<std::string> make = {python_, "-m", "venv", venv_.string()};
    if (!pip_.outer_python.empty()) make.insert(make.begin() + 3, "--without-pip");
    const auto step = run_step(make, work_.path(), "venv", kVenvTimeout);
    if (!step.ok())
      throw EnvironmentError(
          fmt::format("`{} -m venv` failed: {}", python_, failure_reason(step, kVenvTimeout)));
  }

  // 2. Ask the index for the wheel: this is where an unknown version (UsageError, with the
  // versions it offers) or no network shows.
  fs::path download_wheel() {
    std::error_code ec;
    fs::create_directories(downloads(), ec);
    auto download = pip_.command("download");
    download.insert(download.end(),
                    {"--no-deps", "--only-binary", ":all:", "--dest", downloads().string()});
    download.insert(download.end(), pip_network_options().begin(), pip_network_options().end());
    download.push_back("triton==" + version_);
    const auto step = run_step(download, work_.path(), "download", kPipTimeout);
    if (!step.ok()) {
      const auto offered = step.outcome.how == Termination::exited
                               ? offered_versions(step.stderr_text)
                               : std::nullopt;
      if (offered && !offered->empty() &&
          std::find(offered->begin(), offered->end(), version_) == offered->end())
        throw UsageError(fmt::format(
            "triton {} is not on the package index for this platform and Python; of what it "
            "offers, triton-portcheck compiles with: {}",
            version_, offer_text(*offered)));
      throw EnvironmentError(fmt::format("cannot download triton=={} with pip: {}", version_,
                                         failure_reason(step, kPipTimeout)));
    }
    fs::path wheel;
    for (const auto& entry : fs::directory_iterator(downloads(), ec))
      if (entry.path().extension() == ".whl") wheel = entry.path();
    if (wheel.empty())
      throw EnvironmentError(fmt::format("pip download triton=={} produced no wheel in {}",
                                         version_, downloads().string()));
    return wheel;
  }

  // 3. Install from the downloaded file (so it is fetched once), plus the extra packages.
  void install(const fs::path& wheel) {
    auto install = pip_.command("install");
    install.push_back("--quiet");
    install.insert(install.end(), pip_network_options().begin(), pip_network_options().end());
    install.push_back(wheel.string());
    // Triton up to 3.1 imports setuptools, which a venv's ensurepip installs (Python 3.11): an
    // environment without pip of its own gets it with Triton.
    if (!pip_.outer_python.empty()) install.push_back("setuptools");
    install.insert(install.end(), with_packages_.begin(), with_packages_.end());
    const auto step = run_step(install, work_.path(), "install", kPipTimeout);
    if (!step.ok())
      throw EnvironmentError(
          fmt::format("pip install triton=={}{} failed: {}", version_,
                      with_packages_.empty() ? "" : " " + util::join(with_packages_, " "),
                      failure_reason(step, kPipTimeout)));
    std::error_code ec;
    fs::remove_all(downloads(), ec);
  }

  // 4. It must import; this also tells the Python and Triton versions for the marker.
  std::pair<std::string, std::string> imported_versions() {
    const auto step = run_step({venv_python_, "-c",
                                "import platform, triton; print(platform.python_version()); "
                                "print(triton.__version__)"},
                               work_.path(), "check", kVenvTimeout);
    if (!step.ok())
      throw EnvironmentError(fmt::format("triton {} was installed but does not import: {}",
                                         version_, failure_reason(step, kVenvTimeout)));
    const auto lines = util::split_lines(step.stdout_text);
    return {lines.empty() ? "" : std::string(util::trim(lines[0])),
            lines.size() < 2 ? "" : std::string(util::trim(lines[1]))};
  }

  // 5. Marker, relocation, rename: the folder appears under its final name complete.
  void finish(const fs::path& final_dir, const std::string& wheel_name,
              const EnvAddReport& report) {
    const auto [python_version, triton_version] = imported_versions();
    relocate_scripts(venv_ / "bin", venv_, final_dir);
    const auto created = now_iso8601();
    nlohmann::json marker = {{"version", version_},
                             {"triton_version", triton_version},
                             {"python", python_version},
                             {"base_python", python_},
                             {"with", with_packages_},
                             {"created", created},
                             {"last_used", created},
                             {"wheel", wheel_name},
                             {"wheel_bytes", report.wheel_bytes},
                             {"expected_bytes", report.expected_bytes}};
    util::atomic_write_file(venv_ / kEnvironmentMarker, marker.dump(2) + "\n");
    std::error_code ec;
    fs::rename(venv_, final_dir, ec);
    if (ec)
      throw EnvironmentError(fmt::format("cannot move {} to {}: {}", venv_.string(),
                                         final_dir.string(), ec.message()));
    staging_.release();
  }

  [[nodiscard]] fs::path downloads() const { return work_.path() / "wheels"; }

  std::string version_;
  std::vector<std::string> with_packages_;
  std::string python_;
  util::TempDir work_;     // downloads and logs
  util::TempDir staging_;  // the venv itself
  fs::path venv_;
  std::string venv_python_;
  PipRunner pip_;  // chosen with the venv (make_venv)
  // A killed add (SIGKILL, the OOM killer) takes its pip with it and leaves no 1 GB staging
  // folder; its lock file is swept by the next command (sweep_abandoned_environments).
  util::DeathWatch death_watch_;
};

// `env add VERSION --with PKG` on an environment that exists: PKG installed into it (pip
// decides what is already there) and added to the marker's "with" list.
void install_into(const fs::path& root, const std::string& version, const fs::path& dir,
                  const std::vector<std::string>& packages, const std::string& python) {
  const auto logs = staging_dir(root, temp_prefix(version) + "work-");
  const util::DeathWatch death_watch(step_marker(), {logs.path()});
  auto install =
      pip_runner_for(python, (dir / "bin" / "python").string(), logs.path()).command("install");
  install.push_back("--quiet");
  install.insert(install.end(), pip_network_options().begin(), pip_network_options().end());
  install.insert(install.end(), packages.begin(), packages.end());
  const auto step = run_step(install, logs.path(), "install", kPipTimeout);
  if (!step.ok())
    throw EnvironmentError(
        fmt::format("pip install {} into the environment of triton {} failed: {}",
                    util::join(packages, " "), version, failure_reason(step, kPipTimeout)));
  auto marker = read_marker(dir).value_or(nlohmann::json::object());
  if (!marker.is_object()) marker = nlohmann::json::object();
  auto with = marker.contains("with") && marker["with"].is_array() ? marker["with"]
                                                                   : nlohmann::json::array();
  for (const auto& pkg : packages)
    if (std::find(with.begin(), with.end(), pkg) == with.end()) with.push_back(pkg);
  marker["with"] = with;
  util::atomic_write_file(dir / kEnvironmentMarker, marker.dump(2) + "\n");
}

}  // namespace

EnvAddReport add_environment(const std::string& version,
                             const std::vector<std::string>& with_packages,
                             const std::string& base_python) {
  validate_version(version);
  for (const auto& pkg : with_packages)
    if (pkg.empty() || pkg.starts_with("-"))
      throw UsageError(
          fmt::format("--with '{}': expected a package requirement such as numpy or "
                      "numpy==2.1, not a pip option",
                      pkg));
  const auto python = resolve_python(base_python);
  const auto root = environments_root();
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw EnvironmentError(fmt::format("cannot create {}: {}", root.string(), ec.message()));
  const auto final_dir = root / version;

  sweep_abandoned_environments();
  const auto lock = version_lock(root, version);
  if (is_complete(final_dir)) {
    if (!with_packages.empty()) install_into(root, version, final_dir, with_packages, python);
    auto report = already_present(version, final_dir);
    report.installed_packages = with_packages;
    return report;
  }
  sweep_stale(root, version);
  if (fs::exists(final_dir)) fs::remove_all(final_dir, ec);  // a folder that never completed
  return EnvironmentBuild(root, version, with_packages, python).run(final_dir);
}

std::vector<EnvInfo> list_environments() {
  sweep_abandoned_environments();
  std::vector<EnvInfo> out;
  const auto root = environments_root();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const auto name = entry.path().filename().string();
    std::error_code e2;
    if (!is_release_version(name) || !entry.is_directory(e2) || !is_complete(entry.path()))
      continue;
    EnvInfo info;
    info.version = name;
    info.path = entry.path();
    if (const auto marker = read_marker(entry.path())) {
      info.python_version = marker->value("python", "");
      info.last_used = marker->value("last_used", "");
    }
    info.bytes = util::folder_bytes(entry.path());
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(),
            [](const EnvInfo& a, const EnvInfo& b) { return release_less(a.version, b.version); });
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
  const auto lock = version_lock(root, version);
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

std::size_t sweep_abandoned_environments() {
  const auto root = environments_root();
  std::set<std::string> versions;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (auto version = leftover_version(entry.path().filename().string()); !version.empty())
      versions.insert(version);
  std::size_t removed = 0;
  for (const auto& version : versions) {
    try {
      const auto lock = version_lock(root, version, util::FileLock::Wait::no);
      if (lock.held()) removed += sweep_stale(root, version);
    } catch (const EnvironmentError&) {
      // A read-only home: what is there stays, as it did before.
    }
  }
  return removed;
}

std::vector<std::string> index_releases(const std::string& base_python) {
  const auto python = resolve_python(base_python);
  const util::TempDir work("triton-portcheck-index");
  std::vector<std::string> ask = {python,          "-m",
                                  "pip",           "download",
                                  "--no-deps",     "--pre",
                                  "--only-binary", ":all:",
                                  "--dest",        (work.path() / "d").string()};
  ask.insert(ask.end(), pip_network_options().begin(), pip_network_options().end());
  ask.push_back("triton==0.0.0.dev0");  // no such release: pip lists the ones there are
  const auto step = run_step(ask, work.path(), "index", kVenvTimeout);
  auto offered =
      step.outcome.how == Termination::exited ? offered_versions(step.stderr_text) : std::nullopt;
  if (!offered)
    throw EnvironmentError(fmt::format("cannot list the Triton releases on the package index: {}",
                                       failure_reason(step, kVenvTimeout)));
  std::erase_if(*offered, [](const std::string& v) { return !is_release_version(v); });
  std::sort(offered->begin(), offered->end(), release_less);
  return *offered;
}

}  // namespace portcheck
