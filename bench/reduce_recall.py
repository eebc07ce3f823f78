#!/usr/bin/env python3
"""What `check --reduce` misses: each case is checked exhaustively and reduced (both --no-cache,
same targets), and the reduced run must find every failure fingerprint the exhaustive run finds.
Prints, per case, rows, groups (compiled rows), cells, cells compiled and wall time of both, the
fingerprints only the exhaustive run found (the recall's misses), and every represented cell
whose verdict (status, kind, fingerprint) differs from the one its own compile gave.

    bench/reduce_recall.py [--python .venv/bin/python] [--targets cuda:90,hip:gfx942]
                           [--cases sample,flag_gems] [--out bench/results/reduce-recall.md]

Cases: `sample` captures the sample package's tests (tests/fixtures/sample_pkg) in interpret mode
and checks the rows; `flag_gems` checks the 152 rows captured from flag_gems 5.0.2's tests
(bench/flag_gems/captured-cpu.toml), with flag_gems installed once by bench/flag_gems/fg_install.py.
"""
import argparse
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = ROOT / "build" / "triton-portcheck"
sys.path.insert(0, str(ROOT / "bench" / "flag_gems"))
import fg_install  # noqa: E402


def check(manifest, python, targets, env, reduce, out):
    cmd = [str(BINARY), "check", "--manifest", str(manifest), "--python", python, "--no-cache", "-q",
           "-t", targets, "--json", str(out)] + (["--reduce"] if reduce else [])
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=manifest.parent)
    if run.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr[-2000:]}")
    return json.loads(out.read_text())


def verdict(cell):
    return (cell["status"], cell["kind"], cell["fingerprint"])


def compare(name, exhaustive, reduced):
    full = {(c["row"], c["target"]): c for c in exhaustive["cells"]}
    failing = lambda report: {c["fingerprint"] for c in report["cells"] if c["fingerprint"]}  # noqa: E731
    missed = sorted(failing(exhaustive) - failing(reduced))
    differing = [(c["row"], c["target"], c["represented_by"], verdict(c), verdict(full[(c["row"], c["target"])]))
                 for c in reduced["cells"]
                 if c.get("represented_by") and verdict(c) != verdict(full[(c["row"], c["target"])])]
    compiled = [c for c in reduced["cells"] if not c.get("represented_by")]
    groups = len({c["row"] for c in compiled})
    return {"name": name, "rows": len(exhaustive["rows"]), "groups": groups,
            "cells": len(exhaustive["cells"]), "compiled": len(compiled),
            "wall_full": exhaustive["wall_s"], "wall_reduced": reduced["wall_s"],
            "fingerprints": len(failing(exhaustive)), "missed": missed, "differing": differing}


def sample_case(work, python, env):
    pkg = work / "sample_pkg"
    shutil.copytree(ROOT / "tests" / "fixtures" / "sample_pkg", pkg)
    run = subprocess.run([str(BINARY), "capture", "-o", "portcheck.toml", "--",
                          python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                         cwd=pkg, capture_output=True, text=True, env=env)
    if run.returncode not in (0, 1):
        sys.exit(f"capture of the sample package exited {run.returncode}: {run.stderr[-2000:]}")
    return pkg / "portcheck.toml", env


def flag_gems_case(work, python, env):
    paths = fg_install.prepare(fg_install.DEFAULT_FOLDER, python)
    manifest = work / "flag_gems" / "portcheck.toml"
    manifest.parent.mkdir()
    shutil.copy(fg_install.captured_rows(), manifest)
    return manifest, dict(env, PYTHONPATH=":".join(str(p) for p in paths))


CASES = {"sample": sample_case, "flag_gems": flag_gems_case}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--targets", default="cuda:90,hip:gfx942")
    parser.add_argument("--cases", default="sample,flag_gems")
    parser.add_argument("--out", help="also write the table as Markdown to this file")
    args = parser.parse_args()
    python = os.path.abspath(args.python) if "/" in args.python else args.python
    results = []
    with tempfile.TemporaryDirectory(prefix="portcheck-reduce-") as tmp:
        work = pathlib.Path(tmp)
        env = dict(os.environ, TRITON_PORTCHECK_HOME=str(work / "home"), NO_COLOR="1")
        for name in args.cases.split(","):
            manifest, case_env = CASES[name](work, python, env)
            full = check(manifest, python, args.targets, case_env, False, work / f"{name}-full.json")
            reduced = check(manifest, python, args.targets, case_env, True, work / f"{name}-reduced.json")
            results.append(compare(name, full, reduced))
            print(f"  {name}: done", file=sys.stderr)
    lines = [f"Produced by `bench/reduce_recall.py --targets {args.targets} --cases {args.cases}` on "
             f"{datetime.date.today().isoformat()}. Do not edit by hand.", "",
             "| case | rows | groups | cells | compiled (reduced) | wall exhaustive (s) | wall reduced (s) | "
             "failure fingerprints | missed by --reduce | represented cells whose verdict differs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['name']} | {r['rows']} | {r['groups']} | {r['cells']} | {r['compiled']} | "
                     f"{r['wall_full']:.1f} | {r['wall_reduced']:.1f} | {r['fingerprints']} | {len(r['missed'])} | "
                     f"{len(r['differing'])} |")
    for r in results:
        for fp in r["missed"]:
            lines.append(f"- {r['name']}: fingerprint {fp} found only by the exhaustive run")
        for row, target, by, got, want in r["differing"]:
            lines.append(f"- {r['name']}: {row} on {target}, represented by {by}: {got}, compiled: {want}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    if any(r["missed"] or r["differing"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
