#pragma once
#include <string>

#include "src/core/report.hpp"

namespace portcheck {

// The matrix as GitHub-flavoured Markdown, with the failure groups and the summary: for
// $GITHUB_STEP_SUMMARY and --markdown FILE.
std::string render_markdown(const Report& report);

// Whether `link` is "https://github.com/OWNER/REPO/issues/N" (or /pull/N) with plain names: the
// only form the known-failure table links to, and the only link from a report that the Markdown
// formats make active; any other (a crafted report's) is shown as code.
bool is_upstream_link(const std::string& link);

}  // namespace portcheck
