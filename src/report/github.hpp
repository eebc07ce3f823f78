#pragma once
#include <filesystem>
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

// One `::error file=...,line=...,title=...::message` workflow command per new failure, paths
// relative to `root` (the repository checkout, $GITHUB_WORKSPACE) when inside it. Every value is
// escaped as the runner unescapes it (properties: % CR LF : ,; data: % CR LF), after its control
// characters are shown escaped, so a message can neither end the command nor start another.
std::string github_annotations(const Report& report, const std::filesystem::path& root);

}  // namespace portcheck
