#!/usr/bin/env python3
"""Issue 50's section of BENCHMARKS.md, from the figures the scripts wrote: the warm reruns of
libraries that ask Triton's driver at import (bench/h200/throughput.sh's `cached` runs, their
lines in runs.txt) and the tool's own memory per cell (bench/tool_memory.py's figures in
bench/results/tool-memory.md). Replaces the section between its markers, or appends it.

    bench/cache_memory_section.py [--benchmarks BENCHMARKS.md]
"""
import pathlib
import re

import benchmarks_section  # beside this script

ROOT = pathlib.Path(__file__).resolve().parent.parent
RERUNS = ROOT / "bench" / "h200" / "results" / "throughput" / "issue50" / "a9510df" / "fg-heavy-first-runs.txt"
MEMORY = ROOT / "bench" / "results" / "tool-memory.md"
BEGIN, END = "<!-- BEGIN cache-and-memory -->", "<!-- END cache-and-memory -->"
# "fg-cache-warm: exit 1, 8883 ms, 1674 cells (1674 from cache)"
RUN_LINE = re.compile(r"^(?P<name>[\w-]+)-cache-(?P<run>cold|warm): exit \d+, (?P<ms>\d+) ms, ?(?P<cells>.*)$")
LIBRARIES = {"fg": "flag_gems 5.0.2 (1,674 cells of fg-live.toml)",
             "heavy": "the heavy library (bench/heavy_library.py, 2,000 cells)"}


def rerun_rows():
    rows = []
    for line in RERUNS.read_text().splitlines():
        match = RUN_LINE.match(line)
        if match:
            rows.append(f"| {LIBRARIES.get(match['name'], match['name'])} | {match['run']} | "
                        f"{int(match['ms']) / 1000:.1f} | {match['cells'] or 'every cell compiled'} |")
    return rows


def section():
    memory = MEMORY.read_text().split("\n", 1)[1].strip()  # without its title
    return "\n".join([
        BEGIN, "## Result cache for libraries that ask the driver, and the tool's own memory (issue 50)", "",
        "Produced by `bench/cache_memory_section.py` from the figures bench/h200/throughput.sh and "
        "bench/tool_memory.py wrote. Do not edit by hand.", "",
        "Warm reruns with the result cache on the H100 machine (16 cores, Triton 3.6.0, 16 jobs, the a9510df "
        "wheel): both libraries ask Triton's active driver at import, so before issue 50 none of their cells "
        "could come from the cache. What a warm rerun still costs is the import (torch, transformers, the "
        "library) and one inspection per module and target.", "",
        "| library | run | wall (s) | cells |", "|---|---|---:|---|", *rerun_rows(), "",
        "The tool's own peak memory (bench/results/tool-memory.md):", "", memory, END])


if __name__ == "__main__":
    benchmarks_section.main(__doc__.splitlines()[0], BEGIN, END, section)
