#include "src/check/check_options.hpp"

#include <algorithm>
#include <array>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include "src/core/errors.hpp"
#include "util/proc.hpp"

namespace portcheck {
namespace {

template <typename Enum>
struct Named {
  Enum value;
  std::string_view name;
};

constexpr std::array<Named<Isolation>, 2> kIsolations{{
    {Isolation::fork, "fork"},
    {Isolation::process, "process"},
}};

constexpr std::array<Named<StaticMode>, 3> kStaticModes{{
    {StaticMode::compile, "compile"},
    {StaticMode::skip, "skip"},
    {StaticMode::only, "only"},
}};

template <typename Enum, std::size_t N>
std::string_view name_in(const std::array<Named<Enum>, N>& table, Enum value) {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return "?";  // unreachable while every enumerator has its row
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_in(const std::array<Named<Enum>, N>& table, std::string_view name) {
  for (const auto& entry : table)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Isolation isolation) { return name_in(kIsolations, isolation); }
std::string_view to_string(StaticMode mode) { return name_in(kStaticModes, mode); }
std::optional<Isolation> parse_isolation(std::string_view name) {
  return value_in(kIsolations, name);
}
std::optional<StaticMode> parse_static_mode(std::string_view name) {
  return value_in(kStaticModes, name);
}

void prepare_output_folder(const std::filesystem::path& dir, std::string_view flag) {
  const auto expected = "expected a folder (created if missing)";
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("{} {}: is not a folder; {}", flag, dir.string(), expected));
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw UsageError(fmt::format("{} {}: cannot create it ({}); {}", flag, dir.string(),
                                 ec.message(), expected));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError(fmt::format("{} {}: the folder is not writable; {} that this user can write",
                                 flag, dir.string(), expected));
}

std::uint64_t default_worker_max_rss_bytes() {
  constexpr std::uint64_t kAtLeast = 4ULL << 30;
  return std::max(kAtLeast, util::usable_memory_bytes() / 4);
}

}  // namespace portcheck
