#pragma once
// Triton version environments: one virtual environment per Triton release under
// <portcheck_home()>/envs/<version>, made by `env add`, used by `check --triton current,3.8.0`.
//
// Layout of <root> = environments_root():
//   <version>/                  a complete environment: a venv with triton==<version>, plus
//     bin/python                the interpreter to run cells with
//     portcheck-env.json        the marker, written last before the rename (see below)
//   <version>.lock              flock'ed by `env add` / `env remove` of that version, and removed
//                               by its holder before unlocking
//   .tmp-<version>-XXXXXX/      a venv or download being made; never listed nor used
//
// What a killed add or remove leaves (its .tmp- folders, its lock file) is swept by the next
// command that looks here (sweep_abandoned_environments), once no live process holds the lock.
//
// An environment is complete when it has both bin/python and the marker; only complete ones are
// listed or returned by environment_python().
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/versions/release_versions.hpp"

namespace portcheck {

// The marker file inside an environment folder.
inline constexpr const char* kEnvironmentMarker = "portcheck-env.json";

std::filesystem::path environments_root();  // portcheck_home() / "envs"
// environments_root() / version, after validate_version (UsageError when invalid).
std::filesystem::path environment_dir(const std::string& version);
// <dir>/bin/python when the environment is complete, else nullopt. Validates the version.
std::optional<std::filesystem::path> environment_python(const std::string& version);

struct EnvAddReport {
  std::string version;
  std::uint64_t wheel_bytes = 0;     // the downloaded triton wheel file
  std::uint64_t expected_bytes = 0;  // estimate: fresh venv + the wheel's uncompressed contents
  std::uint64_t actual_bytes = 0;    // the finished folder, walked (apparent sizes, no symlinks)
  std::filesystem::path path;        // environment_dir(version)
  bool already_present = false;      // triton was not installed; the sizes come from the marker
  // With already_present: the --with packages installed into the existing environment.
  std::vector<std::string> installed_packages;
};

// Makes environment_dir(version): `base_python -m venv` into <root>/.tmp-<version>-XXXXXX, then
// `pip download --no-deps triton==VERSION` (which asks the index: an unknown version throws
// UsageError listing the versions it offers; no network or a failing pip throws EnvironmentError
// with pip's reason), `pip install <the wheel> <with_packages...>`, an import check, the marker,
// and a rename into place. Holds an exclusive flock on <root>/<version>.lock throughout, so a
// concurrent add of the same version waits and then reports already_present. On an environment that
// is already there, the with_packages are installed into it (installed_packages). base_python
// empty: resolve_python("") ($VIRTUAL_ENV's python, else python3 on PATH). A with_packages entry
// starting with '-' (a pip option) throws UsageError.
EnvAddReport add_environment(const std::string& version,
                             const std::vector<std::string>& with_packages,
                             const std::string& base_python);

struct EnvInfo {
  std::string version;
  std::string python_version;  // e.g. "3.11.7", from the marker
  std::uint64_t bytes = 0;     // walked, as actual_bytes
  std::filesystem::path path;
  std::string last_used;  // ISO 8601 UTC, e.g. "2025-01-31T12:00:00Z"
};

// Complete environments only, in version order (3.9.0 before 3.10.0, rc before the release).
std::vector<EnvInfo> list_environments();

// Sets the marker's last_used to now; does nothing when the environment is not complete.
void touch_environment(const std::string& version);

// Removes the environment (under its lock; renamed aside first, so it vanishes at once). Returns
// false when there was none.
bool remove_environment(const std::string& version);

// Removes the .tmp-<version>-* folders and <version>.lock files that killed or failed `env add` /
// `env remove` runs left under environments_root(), for every version whose lock no live process
// holds (a non-blocking flock tells). Returns how many folders it removed. One readdir when there
// is nothing; called by every command that uses environments, and by `cache clean`.
std::size_t sweep_abandoned_environments();

// The Triton releases the package index offers for this platform and `base_python`'s Python
// (pip's own answer: its "from versions" list for a version that does not exist), in release
// order, pre-releases included. Throws EnvironmentError when pip cannot ask the index.
std::vector<std::string> index_releases(const std::string& base_python);

}  // namespace portcheck
