#pragma once
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace portcheck {

// A compiler backend of Triton. Each has one row in target.cpp's table: its name, how its
// architectures are spelled and its warp-size rule. A new backend is an enumerator and its row.
class Backend {
 public:
  enum Id : unsigned char { cuda, hip };

  // Implicit, so that `Backend b = Backend::hip` and `b == Backend::hip` read as for an enum.
  constexpr Backend(Id id) : id_(id) {}  // NOLINT(google-explicit-constructor)

  // The backend called `name` ("cuda", "hip"); nullopt for any other text.
  static std::optional<Backend> named(std::string_view name);

  [[nodiscard]] constexpr Id id() const { return id_; }
  [[nodiscard]] std::string_view name() const;
  constexpr bool operator==(const Backend&) const = default;
  constexpr auto operator<=>(const Backend&) const = default;

 private:
  Id id_;
};

// A backend is its name in JSON.
void to_json(nlohmann::json& json, const Backend& backend);

// A compile target, parsed once from its name: "cuda:90" (a compute capability without the dot)
// or "hip:gfx942".
struct Target {
  Backend backend = Backend::cuda;
  std::string arch;  // "90" or "gfx942"
  // Parsing sets it by the backend's rule (warp_size_for); a check replaces it with the probe's
  // answer, which is what the installed Triton compiles for.
  int warp_size = 32;

  [[nodiscard]] std::string name() const;  // "cuda:90"
  bool operator==(const Target&) const = default;
};

// What the worker is told of a target: {"backend", "arch", "warp_size"}.
void to_json(nlohmann::json& json, const Target& target);

// Parses "cuda:<capability>" or "hip:gfx<arch>"; nullopt with `error` set when malformed.
std::optional<Target> parse_target(std::string_view text, std::string* error = nullptr);

// A target name the tool has already checked, such as a cell's. Throws std::logic_error (a bug
// of ours, exit 4) when it is not one.
Target checked_target(std::string_view name);

// The one warp-size rule: 64 on the CDNA gfx9 family, 32 elsewhere.
int warp_size_for(Backend backend, std::string_view arch);

const std::vector<std::string>& default_target_names();
// One of default_target_names(), the targets the tool ships to: a release too old or too new for
// one gives its cells an unsupported-target verdict (cuda:100 on Triton 3.2) instead of refusing
// the run, which is for a name no release compiles for (a typo, an architecture not shipped to).
bool is_shipped_target(const std::string& name);

}  // namespace portcheck
