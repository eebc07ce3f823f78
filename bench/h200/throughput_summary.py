#!/usr/bin/env python3
"""Figures of the H200 throughput runs (bench/h200/throughput.sh): for each JSON report given as
NAME=PATH, the wall, the floor (max(sum of compile times / jobs, longest cell)), wall / floor, the
share of the cores inside Triton's compile over the run and its first minute (bench/timeline.py),
the same two from the first compile on, the median time a cell spent outside the compile, batches, and what was shared by TTIR
(bench/ttir_sharing.py); then, for each pair given as --same A,B, whether the cells both hold got
the same verdicts.

    throughput_summary.py --jobs 16 new=liger-new.json old=liger-old.json --same new,old
"""
import argparse
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import timeline  # noqa: E402
import ttir_sharing  # noqa: E402


def _rounded(value, digits):
    return None if value is None else round(value, digits)


def figures(report, jobs):
    compiled = [c for c in report["cells"] if not c.get("cached") and c.get("compile_s", 0) > 0]
    compile_sum = sum(c["compile_s"] for c in compiled)
    floor = max(compile_sum / jobs, max((c["compile_s"] for c in compiled), default=0))
    when = timeline.timeline(report, jobs, 5.0)
    outside = [c["wall_s"] - c["compile_s"] - (c.get("waited_s") or 0) for c in compiled if c["wall_s"] > 0]
    resources = report["environment"]["resources"]
    return {
        "cells": len(report["cells"]), "compiled": len(compiled), "interrupted": report.get("interrupted"),
        "wall_s": round(report["wall_s"], 1), "compile_sum_s": round(compile_sum, 1), "floor_s": round(floor, 1),
        "wall_over_floor": round(report["wall_s"] / floor, 3) if floor else None,
        "inside_compile": round(when["inside_compile"], 3) if when["inside_compile"] else None,
        "inside_compile_first_minute": _rounded(when["inside_compile_first_minute"], 3),
        "inside_compile_last_tenth": _rounded(when["inside_compile_last_tenth"], 3),
        "first_compile_at_s": _rounded(when["first_compile_at_s"], 1),
        # From the first compile on (what comes before is the probe and the library's import,
        # which every cell of a library needs): the share of the cores inside compile, and the
        # wall against the floor plus that start.
        **after_first_compile(report["wall_s"], compile_sum, floor, when["first_compile_at_s"], jobs),
        "outside_compile_median_ms": round(statistics.median(outside) * 1000, 1) if outside else None,
        "represented": sum(1 for c in report["cells"] if c.get("represented_by")),
        **{k: resources.get(k) for k in ("batches", "cells_in_batches", "cells_left_by_batches",
                                         "cells_returned_by_batches", "zygotes_started",
                                         "zygotes_unusable", "zygotes_retired", "zygote_import_s", "cells_rerun_fresh")},
        "ttir": ttir_sharing.sharing(report),
    }


def after_first_compile(wall, compile_sum, floor, first, jobs):
    if first is None or wall <= first:
        return {"inside_compile_after_first_compile": None, "wall_over_floor_plus_start": None}
    return {"inside_compile_after_first_compile": round(compile_sum / (jobs * (wall - first)), 3),
            "wall_over_floor_plus_start": round(wall / (floor + first), 3)}


def same(a, b):
    va = {(c["row"], c["target"]): ttir_sharing.verdict(c) for c in a["cells"] if not c.get("represented_by")}
    vb = {(c["row"], c["target"]): ttir_sharing.verdict(c) for c in b["cells"] if not c.get("represented_by")}
    both = set(va) & set(vb)
    differ = sorted(k for k in both if va[k] != vb[k])
    return {"cells_in_both": len(both), "differ": len(differ), "first_differences":
            [{"cell": list(k), "a": va[k], "b": vb[k]} for k in differ[:10]]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--same", action="append", default=[], help="A,B: compare their verdicts")
    parser.add_argument("--reduced", action="append", default=[], help="FULL,REDUCED: --reduce against the truth")
    parser.add_argument("reports", nargs="+", help="NAME=PATH")
    args = parser.parse_args()
    reports = {}
    for item in args.reports:
        name, path = item.split("=", 1)
        try:
            reports[name] = json.loads(pathlib.Path(path).read_text())
        except (OSError, ValueError) as e:
            print(json.dumps({name: f"no report: {e}"}))
    out = {name: figures(r, args.jobs) for name, r in reports.items()}
    for pair in args.same:
        a, b = pair.split(",")
        if a in reports and b in reports:
            out[f"same:{a},{b}"] = same(reports[a], reports[b])
    for pair in args.reduced:
        full, reduced = pair.split(",")
        if full in reports and reduced in reports:
            out[f"reduce:{reduced} against {full}"] = ttir_sharing.reduce_against(reports[full], reports[reduced])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
