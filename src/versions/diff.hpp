#pragma once
// `triton-portcheck diff`: what changed between two sets of cells (two Triton versions or two
// targets of one report, or two runs: diff.cpp), and the IR diff of `check --save-ir` folders
// (ir_diff.cpp).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/cell_folders.hpp"
#include "src/core/report.hpp"

namespace portcheck {

struct DiffOptions {
  double time_ratio = 1.5;        // slower to compile: new >= time_ratio * old ...
  double time_min_seconds = 0.5;  // ... and new - old >= time_min_seconds (both needed)
  double size_threshold = 0.05;   // size and metadata changes of at least 5% (either way)
};

// Which cells are compared with which.
//   versions: cells of Triton label `a` vs label `b`, matched by (row, target);
//   targets:  cells of target `a` vs target `b`, matched by (row, triton);
//   runs:     every cell of the old report vs the new one, matched by (row, target, triton
//             label); when the runs share no label, by (row, target, triton version); when they
//             share no version either and each holds one Triton, by (row, target) across the
//             two releases; else a UsageError. `a` and `b` only name the two sides (the files).
// For versions and targets pass the one report as both old and new. A label that no cell has
// also matches cells by their Triton __version__ ("3.9.0" finds the "current" cells).
struct DiffSelection {
  enum class Mode { versions, targets, runs };
  Mode mode = Mode::runs;
  std::string a, b;
};

// One numeric field that changed by at least DiffOptions::size_threshold.
struct MetricChange {
  std::string metric;  // "sizes.cubin", "resources.registers", "metadata.shared", ...
  std::string label;   // as the terminal shows it: "cubin", "registers", "spills", "shared", ...
  bool bytes = false;  // a size in bytes (shown as KiB/MiB)
  double old_value = 0;
  double new_value = 0;
  std::optional<double> percent;  // (new - old) / old * 100; nullopt when old is 0
  bool registers = false;         // registers or spills: any change counts (DiffResult::registers)
};

// What the pairs that compiled on both sides took, summed.
struct CompileTime {
  int cells = 0;
  double old_s = 0;
  double new_s = 0;
};

// A pair of matched cells (or one side only, for only_in_old / only_in_new).
struct CellChange {
  std::string row;  // the row's display name
  std::optional<CellResult> old_cell, new_cell;
  std::vector<MetricChange> metrics;  // for DiffResult::changed
};

struct DiffResult {
  DiffSelection selection;
  DiffOptions options;
  int compared = 0;                   // matched pairs; each is in exactly one of the next five
  int unchanged = 0;                  // both pass, or both fail the same way (equal fingerprints)
  std::vector<CellChange> regressed;  // ok/xpass -> failed/xfail/launch
  std::vector<CellChange> fixed;      // failed/xfail/launch -> ok/xpass
  std::vector<CellChange> fail_differently;  // fails on both sides, fingerprints differ
  std::vector<CellChange> not_compared;      // one side unchecked (--static-only)
  // Across the passing pairs (they count as unchanged above):
  std::vector<CellChange> slower;     // compile time regressions
  std::vector<CellChange> registers;  // any change of registers or spills
  std::vector<CellChange> changed;    // size and metadata changes; see CellChange::metrics
  // Autotuned launches whose configs remaining on the target changed (one pair per launch,
  // whatever its outcome category): a launch down to one config is worth knowing.
  std::vector<CellChange> configs_remaining;
  CompileTime compile_time;  // of the passing pairs that both compiled
  std::vector<CellChange> only_in_old, only_in_new;
  bool several_tritons = false;  // the cells selected carry several Triton labels
  // Mode::runs when the two runs share no Triton label: how their cells were paired instead
  // ("paired by Triton version ...", "compared across Triton releases: 3.8.0 -> 3.9.0").
  std::string pairing_note;
};

// Throws UsageError when a label/target of the selection has no cells, a == b, or two runs
// share no Triton release and cannot be paired across one.
DiffResult diff_reports(const Report& old_report, const Report& new_report,
                        const DiffSelection& selection, const DiffOptions& options);

// Terminal text: a header, the counts line, regressions, fixes, changes, slower compiles.
std::string render_diff(const DiffResult& result, bool colour);

// The names --fail-on accepts: regressed, fixed, fail-differently, slower, registers, changed,
// configs-remaining, only-in-old, only-in-new. Entries may themselves be comma-separated
// ("regressed,slower").
const std::vector<std::string>& fail_on_names();

// exit_code::new_failures (1) when any category named in `fail_on` is non-empty, else 0.
// Throws UsageError for an unknown name (before looking at the result).
int diff_exit_code(const DiffResult& result, const std::vector<std::string>& fail_on);

// ---- IR diff (check --save-ir DIR): ir_diff.cpp ----------------------------------------------

// The stages saved, in pipeline order: ttir, ttgir, llir, ptx, amdgcn.
const std::vector<std::string>& ir_stages();

// environment.options.save_ir of a report, when it saved IR.
std::optional<std::filesystem::path> saved_ir_dir(const Report& report);

// DIR/<triton>/<row>/<target>/<entry>.<stage>; the entry is metadata.name, or, when the report
// lacks it, the first file of that folder with that extension. nullopt when there is none.
std::optional<std::filesystem::path> ir_file(const std::filesystem::path& dir,
                                             const CellResult& cell, std::string_view stage);

// Which stages diff_cell_ir compares, and how it names the two files of each.
struct IrDiffOptions {
  std::vector<std::string> stages = ir_stages();  // in this order
  // The "---"/"+++" lines name each file by its path as found under old_dir/new_dir (what
  // `diff --ir STAGE` prints), or, when false, relative to old_dir/new_dir.
  bool full_paths = false;
  int context = 3;  // equal lines around each change
};

// Unified diffs (util/text_diff.hpp) of the normalised IR (normalize_ir) of one pair, stage by
// stage, for the stages saved on both sides; empty when nothing differs or nothing was saved, or
// when the pair has only one side. `diff --ir STAGE` is this with {{STAGE}, true}.
std::string diff_cell_ir(const CellChange& change, const std::filesystem::path& old_dir,
                         const std::filesystem::path& new_dir, const IrDiffOptions& options = {});

}  // namespace portcheck
