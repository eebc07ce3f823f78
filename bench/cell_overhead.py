#!/usr/bin/env python3
"""Where a run's time went beyond Triton's own compile time, from its JSON report (.json or
.json.gz): the floor, max(sum of compile times / jobs, longest cell), against the wall time, and
per kernel source file the cells' own time outside triton.compile (their process's life: fork,
importing the user's module, resource counts, exit), largest first.

    bench/cell_overhead.py REPORT [--jobs N]
"""
import argparse
import gzip
import json
import statistics
from collections import defaultdict


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--jobs", type=int, help="the run's -j (default: from the report)")
    args = parser.parse_args()
    report = load(args.report)
    cells = [c for c in report["cells"] if not c.get("cached") and c.get("wall_s")]
    jobs = args.jobs or (report["environment"].get("options") or {}).get("jobs") or 1
    compile_sum = sum(c["compile_s"] for c in cells)
    floor = max(compile_sum / jobs, max((c["compile_s"] for c in cells), default=0))
    wall_sum = sum(c["wall_s"] for c in cells)
    print(f"{len(cells)} compiled cells at -j {jobs}: wall {report['wall_s']:.1f} s, floor {floor:.1f} s "
          f"(wall/floor {report['wall_s'] / floor:.2f}); the cells' processes lived {wall_sum:.1f} s for "
          f"{compile_sum:.1f} s of compile")
    by_file = defaultdict(list)
    for c in cells:
        by_file[(c.get("source") or {}).get("file") or "?"].append(c)
    rows = []
    for file, group in by_file.items():
        outside = [c["wall_s"] - c["compile_s"] for c in group]
        rows.append((sum(outside), file, len(group), statistics.median(outside)))
    print(f"{'outside compile (s)':>20} {'cells':>6} {'median/cell (ms)':>17}  kernel source")
    for total, file, count, median in sorted(rows, reverse=True)[:15]:
        print(f"{total:20.1f} {count:6d} {median * 1000:17.0f}  {file}")


if __name__ == "__main__":
    main()
