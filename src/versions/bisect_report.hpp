#pragma once
// What `bisect` prints and writes: the boundary with both verdicts, what changed in time and
// size, and the first IR stage that differs (one row); a line per row (a manifest); the history,
// a line per release (--all); and all of it as JSON.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/versions/bisect.hpp"

namespace portcheck {

struct BisectOutcome {
  std::string target;
  std::vector<std::string> releases;  // searched, in order; the first and last are the ends
  std::vector<RowBisection> rows;
  bool all = false;  // every release was compiled (--all)
  // Where each compile's IR was saved (check --save-ir layout), for the first stage that differs.
  std::optional<std::filesystem::path> ir_dir;
};

// The first IR stage the two cells differ at, as a unified diff of the normalised text; or
// which side stopped before it; empty when no IR was saved for either.
std::string first_ir_difference(const CellResult& before, const CellResult& after,
                                const std::filesystem::path& ir_dir);

// Terminal text. One row: the boundary in full, then the history with --all. Several rows: one
// line per row whose ends differ, then how many did not change.
std::string render_bisect(const BisectOutcome& outcome);

// The whole result (docs/environments.md shows it): {target, releases, rows: [{row, boundary,
// verdicts: {release: {...}}, ir_difference}]}.
nlohmann::json bisect_to_json(const BisectOutcome& outcome);

}  // namespace portcheck
