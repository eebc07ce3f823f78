#!/usr/bin/env python3
"""The heavy-library case of the speed benchmark (issue 32), alone: generates the package of
bench/heavy_library.py, checks it with no cache and prints what the run cost beside its floor.

    bench/heavy_case.py --python .venv/bin/python [--jobs N] [--modules 25] [--rows 40]
                        [--targets cuda:90,hip:gfx942] [--import-seconds 3] [--isolation fork]
                        [--limit SECONDS] [--json OUT.json] [--binary build/triton-portcheck]
                        [--bench [--sample-rows 2]]

--limit interrupts the check (SIGINT) after that many seconds: what finished is still reported,
which is how a run that would take an hour is measured at all. Prints one JSON object:
wall, floor (max(sum of compile times / jobs, longest cell)), utilisation (sum of compile times /
(wall x jobs)), the median time a cell spent outside triton.compile once its process was forked,
the zygotes' figures from the report's resources, and the verdict of every cell (for comparing
two isolation modes). --bench makes bench/run's three runs of it instead (the full case with
fork; `--sample-rows` rows of every module with fork and with process) and says which of the
issue's targets they meet.
"""
import argparse
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import heavy_library  # noqa: E402
import timeline  # noqa: E402

RESOURCE_FIELDS = ("zygotes_started", "zygotes_unusable", "zygotes_retired", "zygote_import_s", "batches",
                   "cells_in_batches", "cells_left_by_batches",
                   "tool_peak_rss_bytes", "workers_peak_rss_bytes",
                   "cells_rerun_fresh", "fork_servers_started", "cells_retried", "warm_up_s")


def summarize(report, jobs):
    """The figures of one check's JSON report."""
    cells = report["cells"]
    compiled = [c for c in cells if not c.get("cached")]
    compile_sum = sum(c["compile_s"] for c in compiled)
    longest = max((c["compile_s"] for c in compiled), default=0.0)
    floor = max(compile_sum / jobs, longest)
    # Outside triton.compile, from the moment the cell's process existed: waiting for a zygote's
    # import (`waited_s`, where the report has it) is not the cell's own cost.
    outside = [c["wall_s"] - c["compile_s"] - (c.get("waited_s") or 0.0) for c in compiled if c["wall_s"] > 0]
    resources = report["environment"]["resources"]
    when = timeline.timeline(report, jobs, 5.0)
    return {
        "rows": len(report["rows"]), "cells": len(cells), "compiled": len(compiled),
        "interrupted": bool(report.get("interrupted")), "wall_s": report["wall_s"],
        "compile_sum_s": compile_sum, "longest_s": longest, "floor_s": floor,
        "utilisation": compile_sum / (report["wall_s"] * jobs) if report["wall_s"] > 0 else None,
        "outside_compile_median_ms": statistics.median(outside) * 1000 if outside else None,
        "waited_median_s": statistics.median([c.get("waited_s") or 0.0 for c in compiled]) if compiled else None,
        **{name: when[name] for name in ("first_compile_at_s", "inside_compile_first_minute",
                                         "inside_compile_last_tenth")},
        **{name: resources.get(name) for name in RESOURCE_FIELDS},
        "verdicts": {f"{c['row']}|{c['target']}": [c["status"], c["kind"], c["stage"], c["fingerprint"]]
                     for c in cells},
    }


def run_check(binary, manifest, python, jobs, isolation, env, limit=None, targets=None, extra=()):
    """Runs check on `manifest` with no cache; returns (summary, exit status, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        report_path = pathlib.Path(tmp) / "report.json"
        cmd = [str(binary), "check", "--manifest", str(manifest), "--python", python, "-j", str(jobs),
               "--no-cache", "--isolation", isolation, "--json", str(report_path), "-q", *extra]
        if targets:
            cmd += ["-t", targets]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                cwd=str(pathlib.Path(manifest).parent))
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate()
        if not report_path.exists():
            sys.exit(f"{' '.join(cmd)} exited {proc.returncode} with no report\n{err[-3000:]}")
        return summarize(json.loads(report_path.read_text()), jobs), proc.returncode, err


def import_seconds(python, lib, deps):
    """What one `import heavylib.ops.k00` costs in a fresh interpreter (the whole import a cell of
    the package would make without zygotes), the best of two."""
    best = None
    for _ in range(2):
        started = time.monotonic()
        subprocess.run([python, "-c", "import heavylib.ops.k00"], check=True, cwd=str(lib),
                       env=dict(os.environ, PYTHONPATH=f"{deps}:{lib}"))
        took = time.monotonic() - started
        best = took if best is None else min(best, took)
    return best


def measure(python, binary, jobs, work, modules=25, rows=40, sample_rows=2, targets="cuda:90,hip:gfx942",
            seconds=3.0, limit=None, process_sample=True):
    """The heavy case in full (fork), and a sample of it (`sample_rows` rows of every module, the
    same rows as the full case's first ones) under both isolation modes. Returns
    {"import_s", "full", "sample_fork", "sample_process"}."""
    work = pathlib.Path(work)
    out = {}
    for name, count in (("full", rows), ("sample", sample_rows)):
        manifest, deps = heavy_library.generate(work / name, modules, count, targets.split(","), seconds)
        env = dict(os.environ, PYTHONPATH=str(deps), TRITON_PORTCHECK_HOME=str(work / name / "home"), NO_COLOR="1")
        if name == "full":
            out["import_s"] = import_seconds(python, manifest.parent, deps)
            out["full"] = run_check(binary, manifest, python, jobs, "fork", env, limit)[0]
            continue
        out["sample_fork"] = run_check(binary, manifest, python, jobs, "fork", env)[0]
        if process_sample:
            out["sample_process"] = run_check(binary, manifest, python, jobs, "process", env)[0]
    return out


def checks(result, jobs):
    """The issue's targets for the heavy case, as (text, met)."""
    full, fork, process = result["full"], result["sample_fork"], result.get("sample_process")
    budget = 1.3 * full["floor_s"] + result["import_s"] / jobs + 2.0
    out = [
        (f"heavy library ({full['cells']} cells): wall <= 1.3 x floor + one import / jobs + 2 s: "
         f"{full['wall_s']:.1f} s vs {budget:.1f} s (floor {full['floor_s']:.1f} s, the import alone "
         f"{result['import_s']:.1f} s)", full["wall_s"] <= budget and not full["interrupted"]),
        (f"heavy library: median time a cell spends outside triton.compile once its zygote is warm "
         f"<= 50 ms: {full['outside_compile_median_ms']:.0f} ms", full["outside_compile_median_ms"] <= 50),
    ]
    if process is not None:
        shared = {k: v for k, v in full["verdicts"].items() if k in process["verdicts"]}
        out += [
            (f"heavy library sample ({fork['cells']} cells): fork not slower than process: "
             f"{fork['wall_s']:.1f} s vs {process['wall_s']:.1f} s", fork["wall_s"] <= process["wall_s"]),
            (f"heavy library: fork's verdicts equal process's on every cell of the sample, in the sample "
             f"run and in the full one ({len(shared)} cells)",
             fork["verdicts"] == process["verdicts"] and shared == process["verdicts"]),
        ]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--binary", default=str(ROOT / "build" / "triton-portcheck"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--modules", type=int, default=25)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--targets", default="cuda:90,hip:gfx942")
    parser.add_argument("--import-seconds", type=float, default=3.0)
    parser.add_argument("--driver-free", action="store_true")
    parser.add_argument("--isolation", default="fork", choices=("fork", "process"))
    parser.add_argument("--limit", type=float, default=None, help="interrupt the check after this many seconds")
    parser.add_argument("--bench", action="store_true",
                        help="bench/run's three runs (full case with fork, a sample with both isolations) "
                             "and the targets, instead of one run")
    parser.add_argument("--sample-rows", type=int, default=2)
    parser.add_argument("--json", help="also write the summary here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcheck-heavy-") as tmp:
        if args.bench:
            summary = measure(args.python, args.binary, args.jobs, tmp, args.modules, args.rows, args.sample_rows,
                              args.targets, args.import_seconds, args.limit)
            summary["checks"] = [[text, ok] for text, ok in checks(summary, args.jobs)]
        else:
            manifest, deps = heavy_library.generate(tmp, args.modules, args.rows, args.targets.split(","),
                                                    args.import_seconds, args.driver_free)
            env = dict(os.environ, PYTHONPATH=str(deps), TRITON_PORTCHECK_HOME=str(pathlib.Path(tmp) / "home"),
                       NO_COLOR="1")
            started = time.monotonic()
            summary, code, err = run_check(args.binary, manifest, args.python, args.jobs, args.isolation, env,
                                           args.limit)
            summary.update(exit=code, measured_wall_s=time.monotonic() - started, isolation=args.isolation,
                           stderr_tail=err[-1500:])
        summary.update(jobs=args.jobs, modules=args.modules, rows_per_module=args.rows,
                       import_seconds_floor=args.import_seconds)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(summary, indent=1))
    print(json.dumps(_without_verdicts(summary), indent=1))


def _without_verdicts(value):
    if isinstance(value, dict):
        return {k: _without_verdicts(v) for k, v in value.items() if k != "verdicts"}
    return value


if __name__ == "__main__":
    main()
