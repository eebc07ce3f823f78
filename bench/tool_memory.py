#!/usr/bin/env python3
"""The tool's own peak memory per cell (issue 50, item 7): what triton-portcheck's process holds
grows with the cells of the run, and should be a few KB a cell.

The rows are the demo's kernels repeated with other BLOCK values, as bench/static_scale.py makes
them (45 distinct specialisations; the other rows repeat one under another name, so their cells
share its cache key), on one target. Three runs in one fresh home, with the result cache:

  cold   --rows N (default 2,000): every cell compiled;
  warm   the same manifest: every cell from the cache;
  large  --large-rows M (default 20,000): every cell from the cache (its keys are the cold run's).

Each run's peak is the report's `resources.tool_peak_rss_bytes` (getrusage of our process); per
cell, that peak divided by the cells, and the growth from the warm run to the large one divided by
the cells it added (what one more cell costs, the binary and its libraries left out).

    bench/tool_memory.py --python .venv/bin/python [--rows 2000] [--large-rows 20000] [--jobs 2]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from static_scale import ROOT, manifest  # noqa: E402  (the same rows as the static pre-checks' scale)

TARGET = "cuda:90"


def run(binary, python, work, home, rows, name, jobs):
    path = work / f"{name}.toml"
    path.write_text(manifest(rows))
    report = work / f"{name}.json"
    started = time.perf_counter()
    done = subprocess.run([binary, "check", "--manifest", str(path), "--python", python, "-t", TARGET,
                           "-j", str(jobs), "-q", "--json", str(report)],
                          capture_output=True, text=True, env={**os.environ, "TRITON_PORTCHECK_HOME": str(home)})
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{name}: check exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    data = json.loads(report.read_text())
    cells = len(data["cells"])
    return {"run": name, "cells": cells, "from_cache": sum(c["cached"] for c in data["cells"]),
            "wall_s": wall, "peak": data["environment"]["resources"]["tool_peak_rss_bytes"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--large-rows", type=int, default=20000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--binary", default=str(ROOT / "build" / "triton-portcheck"))
    args = parser.parse_args()
    python = os.path.abspath(args.python) if "/" in args.python else args.python
    work = Path(tempfile.mkdtemp(prefix="portcheck-tool-memory-"))
    try:
        shutil.copy(ROOT / "demo" / "kernels.py", work / "kernels.py")
        home = work / "home"
        runs = [run(args.binary, python, work, home, args.rows, "cold", args.jobs),
                run(args.binary, python, work, home, args.rows, "warm", args.jobs),
                run(args.binary, python, work, home, args.large_rows, "large", args.jobs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"| run | cells | from cache | wall (s) | our peak RSS (MiB) | KiB per cell |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in runs:
        print(f"| {r['run']} | {r['cells']:,} | {r['from_cache']:,} | {r['wall_s']:.1f} | "
              f"{r['peak'] / 2**20:.0f} | {r['peak'] / r['cells'] / 1024:.1f} |")
    warm, large = runs[1], runs[2]
    added = large["cells"] - warm["cells"]
    if added > 0:
        print(f"\nOne more cell (warm to large): {(large['peak'] - warm['peak']) / added / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
