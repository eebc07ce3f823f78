#!/usr/bin/env python3
"""Issue 43's section of BENCHMARKS.md, from the figures the scripts wrote: the H200 runs'
summaries (bench/h200/throughput.sh -> bench/h200/results/throughput/<library>-<commit>.json) and
the 2-core demo's walls (bench/demo_wall.py -> bench/results/demo-wall.txt). Replaces the section
between its markers, or appends it.

    bench/throughput_section.py [--benchmarks BENCHMARKS.md]
"""
import json
import pathlib

import benchmarks_section  # beside this script

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "h200" / "results" / "throughput"
DEMO_WALL = ROOT / "bench" / "results" / "demo-wall.txt"
BEGIN, END = "<!-- BEGIN throughput -->", "<!-- END throughput -->"
COLUMNS = (("cells", "cells"), ("wall_s", "wall (s)"), ("floor_s", "floor (s)"), ("wall_over_floor", "wall / floor"),
           ("inside_compile", "cores inside compile"),
           ("inside_compile_after_first_compile", "inside compile from the first compile on"),
           ("wall_over_floor_plus_start", "wall / (floor + time to the first compile)"),
           ("inside_compile_first_minute", "first minute"),
           ("inside_compile_last_tenth", "last tenth"), ("first_compile_at_s", "first compile at (s)"),
           ("outside_compile_median_ms", "median outside compile (ms)"), ("batches", "batches"),
           ("cells_returned_by_batches", "cells given back"))


def cell(value):
    if value is None:
        return "-"
    return f"{value:.3g}" if isinstance(value, float) and value < 10 else str(value)


def run_rows(path):
    summary = json.loads(path.read_text())
    library, commit = path.stem.rsplit("-", 1)
    rows, notes = [], []
    for name, figures in summary.items():
        if "wall_s" in figures:
            ttir = figures["ttir"]
            rows.append(f"| {library} | {commit} | {name}{' (interrupted)' if figures.get('interrupted') else ''} | "
                        + " | ".join(cell(figures.get(key)) for key, _ in COLUMNS)
                        + f" | {ttir['cells_sharing_their_ttir']} | {ttir['shared_in_this_run']} |")
        elif name.startswith("same:"):
            notes.append(f"{library} {commit}, {name[5:]}: {figures['cells_in_both']} cells in both, "
                         f"{figures['differ']} verdicts differ")
        elif name.startswith("reduce:"):
            notes.append(f"{library} {commit}, --reduce against the full run: {figures['represented']} cells "
                         f"represented, {figures['verdict_wrong']} with a wrong verdict")
    return rows, notes


def section():
    header = ("| library | commit | run | " + " | ".join(title for _, title in COLUMNS)
              + " | cells sharing their TTIR | shared in the run |\n|" + "---|" * (len(COLUMNS) + 5))
    rows, notes = [], []
    for path in sorted(RESULTS.glob("*.json")):
        more_rows, more_notes = run_rows(path)
        rows += more_rows
        notes += more_notes
    demo = DEMO_WALL.read_text().strip() if DEMO_WALL.exists() else "(bench/results/demo-wall.txt not made yet)"
    return "\n".join([
        BEGIN, "## Throughput: batches, shared backend work (issue 43)", "",
        "Produced by `bench/throughput_section.py` from the figures bench/h200/throughput.sh and bench/demo_wall.py "
        "wrote. Do not edit by hand.", "",
        "The lent GPU machine (an H200 through 51c34a7, an H100 for issue 50's a9510df; 16 cores, Triton 3.6.0), "
        "16 jobs, no cache, nine targets. `old` is the wheel before issue 43 (46bb001), or for a9510df the wheel "
        "before issue 50 (7ee2401); `new` the commit named; `process` a sixteenth of the rows (`--shard 1/16`) under "
        "`--isolation process`. floor = max(sum of compile times / jobs, longest cell); cores inside compile = "
        "sum of compile times / (wall x jobs) (bench/timeline.py). Before the first compile come the environment's "
        "probe and the library's import (torch, transformers and the library itself), which every cell of these "
        "libraries needs: the two figures from the first compile on leave that start out.", "",
        header, *rows, "", *[f"- {note}" for note in notes], "",
        "The demo on this machine's 2 cores (`bench/demo_wall.py`, the binaries' runs interleaved; the old one is 46bb001):", "", demo, END])


if __name__ == "__main__":
    benchmarks_section.main(__doc__.splitlines()[0], BEGIN, END, section)
