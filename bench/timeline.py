#!/usr/bin/env python3
"""Where a check's time went, from its JSON report: how many of the cores were inside Triton's
compile, second by second, and the share over the whole run, its start and its end.

    bench/timeline.py REPORT.json --jobs N [--bucket 5] [--table]

Each compiled cell's report gives when its wall time began (`started_s`, from the run's start),
its wall time and its compile time; its compile is taken to be the end of its wall time (what
comes before it is the wait for its process, its module's import and set-up). The run's own
`wall_s` is the whole. Prints one JSON object: `inside_compile` (the sum of compile times over
wall x jobs), the first compile's start, the share inside the compile over the first minute and
over the last tenth of the run, and with --table the share per bucket.
"""
import argparse
import json


def busy_per_bucket(cells, wall, bucket):
    """Core-seconds inside the compile, per bucket of `bucket` seconds."""
    buckets = [0.0] * (int(wall // bucket) + 1)
    for c in cells:
        end = c["started_s"] + c["wall_s"]
        start = max(c["started_s"], end - c["compile_s"])
        t = start
        while t < end:
            index = int(t // bucket)
            if index >= len(buckets):
                break
            step = min(end, (index + 1) * bucket) - t
            buckets[index] += step
            t += step
    return buckets


def share_between(buckets, bucket, jobs, start, end):
    first, last = int(start // bucket), max(int(start // bucket), int(end // bucket) - 1)
    spans = buckets[first:last + 1]
    return sum(spans) / (len(spans) * bucket * jobs) if spans else None


def timeline(report, jobs, bucket):
    cells = [c for c in report["cells"] if not c.get("cached") and c.get("compile_s", 0) > 0
             and c.get("wall_s", 0) > 0]
    wall = report["wall_s"]
    compile_sum = sum(c["compile_s"] for c in cells)
    if not all("started_s" in c for c in cells):  # a report of a tool before started_s: totals only
        return {"wall_s": wall, "jobs": jobs, "compiled": len(cells), "compile_sum_s": compile_sum,
                "inside_compile": compile_sum / (wall * jobs) if wall > 0 else None, "first_compile_at_s": None,
                "inside_compile_first_minute": None, "inside_compile_last_tenth": None, "per_bucket": []}
    buckets = busy_per_bucket(cells, wall, bucket)
    first = min((c["started_s"] + c["wall_s"] - c["compile_s"] for c in cells), default=None)
    return {
        "wall_s": wall,
        "jobs": jobs,
        "compiled": len(cells),
        "compile_sum_s": compile_sum,
        "inside_compile": compile_sum / (wall * jobs) if wall > 0 else None,
        "first_compile_at_s": first,
        "inside_compile_first_minute": share_between(buckets, bucket, jobs, 0, min(60.0, wall)),
        "inside_compile_last_tenth": share_between(buckets, bucket, jobs, 0.9 * wall, wall),
        "per_bucket": [round(b / (bucket * jobs), 3) for b in buckets],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report")
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--bucket", type=float, default=5.0)
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    with open(args.report) as f:
        result = timeline(json.load(f), args.jobs, args.bucket)
    if not args.table:
        result.pop("per_bucket")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
