#include "src/core/target.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/enum_table.hpp"

namespace portcheck {
namespace {

bool is_compute_capability(std::string_view arch) {
  return !arch.empty() && arch.size() <= 3 && std::all_of(arch.begin(), arch.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

bool is_gfx_arch(std::string_view arch) {
  return arch.size() > 3 && arch.starts_with("gfx") &&
         std::all_of(arch.begin() + 3, arch.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

int always_32(std::string_view /*arch*/) { return 32; }

// gfx9xx (CDNA: gfx908, gfx90a, gfx942, gfx950) executes 64-wide wavefronts; RDNA (gfx10+) and
// later run wave32, which is what Triton's HIP backend compiles for.
int gfx_warp_size(std::string_view arch) {
  return arch.size() == 6 && arch.starts_with("gfx9") ? 64 : 32;
}

struct BackendRow {
  Backend::Id value;
  std::string_view name;
  std::string_view arch_form;     // how the usage line spells an architecture
  std::string_view arch_example;  // one, as the usage line shows it
  bool (*is_arch)(std::string_view arch);
  int (*warp_size)(std::string_view arch);
  std::string_view bad_arch;  // what a malformed architecture is told
};

constexpr auto kBackends = std::to_array<BackendRow>({
    {Backend::cuda, "cuda", "<capability>", "90", is_compute_capability, always_32,
     "a CUDA target is a compute capability without the dot, such as cuda:80 or cuda:90"},
    {Backend::hip, "hip", "<gfx arch>", "gfx942", is_gfx_arch, gfx_warp_size,
     "a HIP target is an AMD gfx architecture, such as hip:gfx942"},
});

const BackendRow& backend_row(Backend backend) {
  const auto* row = util::row_of(kBackends, backend.id());
  if (row == nullptr) throw std::logic_error("a backend without a row in kBackends");
  return *row;
}

// "cuda:<capability> (cuda:90) or hip:<gfx arch> (hip:gfx942)"
std::string target_forms() {
  std::string out;
  for (const auto& row : kBackends)
    out += fmt::format("{}{}:{} ({}:{})", out.empty() ? "" : " or ", row.name, row.arch_form,
                       row.name, row.arch_example);
  return out;
}

// "cuda or hip"
std::string backend_names() {
  std::string out;
  for (const auto& row : kBackends) out += fmt::format("{}{}", out.empty() ? "" : " or ", row.name);
  return out;
}

}  // namespace

std::optional<Backend> Backend::named(std::string_view name) {
  const auto* row = util::row_named(kBackends, name);
  return row != nullptr ? std::optional<Backend>(row->value) : std::nullopt;
}

std::string_view Backend::name() const { return backend_row(*this).name; }

void to_json(nlohmann::json& json, const Backend& backend) { json = std::string(backend.name()); }

std::string Target::name() const { return fmt::format("{}:{}", backend.name(), arch); }

void to_json(nlohmann::json& json, const Target& target) {
  json = {{"backend", target.backend}, {"arch", target.arch}, {"warp_size", target.warp_size}};
}

int warp_size_for(Backend backend, std::string_view arch) {
  return backend_row(backend).warp_size(arch);
}

std::optional<Target> parse_target(std::string_view text, std::string* error) {
  const auto fail = [&](std::string message) -> std::optional<Target> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return fail(fmt::format("'{}' is not a target: expected {}", text, target_forms()));
  const auto backend_name = text.substr(0, colon);
  const auto arch = text.substr(colon + 1);
  const auto backend = Backend::named(backend_name);
  if (!backend)
    return fail(fmt::format("'{}': unknown backend '{}' (expected {})", text, backend_name,
                            backend_names()));
  const auto& row = backend_row(*backend);
  if (!row.is_arch(arch)) return fail(fmt::format("'{}': {}", text, row.bad_arch));
  return Target{*backend, std::string(arch), row.warp_size(arch)};
}

Target checked_target(std::string_view name) {
  std::string error;
  auto target = parse_target(name, &error);
  if (!target) throw std::logic_error("a checked target is malformed: " + error);
  return *std::move(target);
}

const std::vector<std::string>& default_target_names() {
  static const std::vector<std::string> names{"cuda:75",    "cuda:80",     "cuda:90",
                                              "cuda:100",   "cuda:120",    "hip:gfx942",
                                              "hip:gfx950", "hip:gfx1100", "hip:gfx1250"};
  return names;
}

bool is_shipped_target(const std::string& name) {
  const auto& shipped = default_target_names();
  return std::find(shipped.begin(), shipped.end(), name) != shipped.end();
}

}  // namespace portcheck
