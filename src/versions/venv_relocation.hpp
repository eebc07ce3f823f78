#pragma once
// A venv moved after it was made: its scripts carry the absolute path they were made at in their
// shebangs (and activate scripts in a variable).
#include <filesystem>

namespace portcheck {

// Points every script in `bin` that names `from` at `to` (before the venv is renamed to `to`).
void relocate_scripts(const std::filesystem::path& bin, const std::filesystem::path& from,
                      const std::filesystem::path& to);

}  // namespace portcheck
