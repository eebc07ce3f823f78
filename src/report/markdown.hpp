#pragma once
#include <filesystem>
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

// The matrix as GitHub-flavoured Markdown, with the failure groups and the summary: for
// $GITHUB_STEP_SUMMARY and --markdown FILE.
std::string render_markdown(const Report& report);

// One `::error file=...,line=...,title=...::message` workflow command per new failure, paths
// relative to `root` (the repository checkout, $GITHUB_WORKSPACE) when inside it.
std::string github_annotations(const Report& report, const std::filesystem::path& root);

}  // namespace portcheck
