#include "src/report/repro.hpp"

#include <algorithm>
#include <filesystem>

#include "util/ascii.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// `text` as one shell word: bare when it is plainly one (so the common `gamma_ratio` reads as
// typed), else single-quoted. Brackets are quoted too: `dot_small[int8]` is a glob pattern.
std::string shell_word(std::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return util::ascii::is_word(c) ||
           std::string_view("-.:/+,=@%").find(c) != std::string_view::npos;
  });
  return plain ? std::string(text) : util::shell_quoted(text);
}

// The manifest argument: none for the default (portcheck.toml in the working directory, which
// is what `repro` reads without one) or when the report does not say.
std::string manifest_argument(std::string_view manifest) {
  if (manifest == "--demo") return " --demo";
  if (manifest.empty() ||
      std::filesystem::path(manifest).lexically_normal() == std::filesystem::path("portcheck.toml"))
    return "";
  return " --manifest " + shell_word(manifest);
}

}  // namespace

std::string repro_command(const CellResult& cell, std::string_view manifest) {
  if (!failed_in_compile(cell.kind)) return "";
  // The row by its own parts, not cell.kernel: one_row_per_version renames that for display.
  const auto row =
      cell.variant.empty() ? cell.base_kernel : cell.base_kernel + "[" + cell.variant + "]";
  std::string out = "triton-portcheck repro " + shell_word(row) + " -t " + shell_word(cell.target);
  if (!cell.triton.empty() && cell.triton != "current")
    out += " --triton " + shell_word(cell.triton);
  return out + manifest_argument(manifest);
}

}  // namespace portcheck
