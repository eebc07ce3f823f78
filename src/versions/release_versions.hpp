#pragma once
// Triton release versions: canonical PEP 440 strings (one spelling per release, so one
// environment folder per release), their order, and which releases the worker compiles with.
#include <string>
#include <vector>

namespace portcheck {

// "3.8.0", "3.9.0rc1", "2.1.0.post1", "3.0.0.dev2", "1!2.0": a canonical PEP 440 public version;
// paths, "../x", spaces, "-", local "+cu121" parts and "" are not.
bool is_release_version(const std::string& version);

// Accepts a canonical PEP 440 release string; anything else throws UsageError naming the value.
void validate_version(const std::string& version);

// The oldest Triton release the worker compiles with (python/portcheck_worker/compile/
// releases.py keeps each release family's differences; 2.x has no backend plug-ins, so it cannot
// compile for a GPU it does not run on).
inline constexpr const char* kOldestRelease = "3.0.0";
// validate_version, then a UsageError naming the oldest release for one older than it.
void validate_compilable_release(const std::string& version, const std::string& what);

// Whether two release strings name the same release (3.9 and 3.9.0 do).
bool same_release(const std::string& a, const std::string& b);
// PEP 440 order of two release strings (3.9.0 before 3.10.0, 3.9.0rc1 before 3.9.0).
bool release_less(const std::string& a, const std::string& b);
// 3.9.0rc1, 3.9.0b2, 3.9.0.dev3: not a final release.
bool is_prerelease(const std::string& version);

// A run's Triton labels (--triton, or the manifest's `triton`) with every version that is the
// invoking interpreter's Triton (`current_version`) replaced by "current", listed once: no second
// environment is made for the Triton already in use. `replaced` gets the versions it replaced.
std::vector<std::string> use_current_for_installed(const std::vector<std::string>& labels,
                                                   const std::string& current_version,
                                                   std::vector<std::string>* replaced);

}  // namespace portcheck
