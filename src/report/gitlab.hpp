#pragma once
#include <filesystem>
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

// GitLab's Code Quality report (a JSON array of issues, the CodeClimate subset GitLab documents):
// one issue per failing cell that was not expected to fail, so a merge request's widget lists the
// kernels a change breaks for some GPU or Triton. Paths are relative to `root` (the checkout,
// $CI_PROJECT_DIR) when inside it, as GitLab needs; each issue's fingerprint is unique to its
// cell and stable across runs, which is how GitLab tells new issues from resolved ones. Failures
// the baseline already knows are "minor", new ones "major".
std::string render_gitlab_codequality(const Report& report, const std::filesystem::path& root);

}  // namespace portcheck
