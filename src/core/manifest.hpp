#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/target.hpp"

namespace portcheck {

// Where a value was written, for error messages: "portcheck.toml:12: kernel.signature.n".
struct Location {
  std::filesystem::path file;
  int line = 0;
  [[nodiscard]] std::string describe(const std::string& key) const;
};

// Beside the manifest: the modules `capture` saved of kernels generated at run time (a library's
// code generation, torch.compile), one file per content.
inline constexpr const char* kGeneratedFolder = "portcheck-generated";

// The Python function a row compiles: a module path or a file relative to the manifest.
struct KernelRef {
  std::string module;                              // "mypkg.kernels", empty for a file
  std::filesystem::path file;                      // absolute, empty for a module
  std::string function;                            // "attention"
  std::filesystem::path import_root;               // the manifest's folder, put on sys.path
  std::vector<std::filesystem::path> python_path;  // `pythonpath` entries, absolute, after it
  [[nodiscard]] std::string spelled() const;       // as a user would write it
};

// The kernel as the worker is told where to find it: a file or a module, the function, the folder
// to import from, extra sys.path entries.
nlohmann::json kernel_ref_json(const KernelRef& ref);

// One row of the matrix: a [[kernel]] whose own keys form a complete specialisation, or one of
// its [[kernel.variant]]s.
struct KernelRow {
  std::string kernel;
  std::string variant;  // empty for a plain row
  KernelRef ref;
  nlohmann::json signature = nlohmann::json::object();  // argument -> Triton type string
  nlohmann::json constants = nlohmann::json::object();  // argument -> encoded constexpr value
  nlohmann::json options = nlohmann::json::object();    // compile option -> value
  std::optional<std::string> specialization;  // a whole serialised specialisation (JSON text)
  std::vector<std::string> targets;           // empty: the manifest's defaults
  std::vector<std::string> xfail;             // target names expected to fail
  std::optional<double> timeout_s;
  std::optional<std::uint64_t> max_rss_bytes;
  std::string captured;  // where `capture` saw the launch (informational)
  // The devices whose host code launched it (`capture --as`); empty for a hand-written row. A
  // kernel with rows of a vendor checks only those on that vendor's targets (check/plan.hpp).
  std::vector<std::string> captured_as;
  // The autotuned launches (named within this row's [[kernel]]) that benchmark this row as one of
  // their configs: the row's verdict on a target is the launch's (check/autotuned_launches.hpp).
  // Empty: the row is launched as it is.
  std::vector<std::string> autotune;
  Location where;                                 // the [[kernel]] or [[kernel.variant]] header
  std::map<std::string, Location> key_locations;  // "signature.n", "options.num_warps", ...

  [[nodiscard]] std::string display_name() const {
    return variant.empty() ? kernel : kernel + "[" + variant + "]";
  }
  [[nodiscard]] Location location_of(const std::string& key) const;
};

// The range a cell's time limit may take. Below 10 ms nothing compiles; beyond a week (1e300,
// inf) it would silently mean no limit at all, as would anything that rounds to 0 ms.
inline constexpr double kMinTimeoutSeconds = 0.01;
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

// Empty when `seconds` is a usable time limit, else what is wrong with it.
std::string timeout_problem(double seconds);

struct Manifest {
  std::filesystem::path file;
  std::vector<std::string> targets;  // names, validated
  Location targets_where;            // [defaults] targets; line 0 when the built-in list
  std::vector<std::string> triton{"current"};
  double timeout_s = 300;
  std::uint64_t max_rss_bytes = 8ULL << 30;
  std::vector<std::filesystem::path> python_path;  // [defaults] pythonpath, absolute
  std::optional<std::string> cache_url;  // [defaults] cache_url, a valid core/remote_url.hpp URL
  bool cache_readonly = false;           // [defaults] cache_readonly
  std::vector<KernelRow> rows;
  // Not errors, but worth one line before the run: a [[kernel]] that looks meant as a row and
  // is not one (its variants complete it, and every variant replaces one of its own values).
  std::vector<std::string> notes;
};

// Parses and validates everything that can be checked without Python. Throws UsageError.
Manifest load_manifest(const std::filesystem::path& file);

// Checks a Triton type string such as "*fp16:16", "i32", "*kbf16", "tensordesc<fp16[64, 64]>".
bool is_valid_type_string(const std::string& type, std::string* why = nullptr);

}  // namespace portcheck
