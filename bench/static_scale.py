#!/usr/bin/env python3
"""The static pre-checks at library size (issue 15): their time for a manifest of ROWS rows.

The rows are the demo's kernels, each repeated with other BLOCK values (what a captured library
looks like: many rows per kernel), on the demo's nine targets. Runs `check --static-only` with no
cache and prints the seconds the report's environment.static says the pre-checks took.

    bench/static_scale.py --python .venv/bin/python [--rows 2000] [--binary build/triton-portcheck]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def demo_rows():
    """The demo manifest's [[kernel]] tables, as text, and its [defaults] block."""
    text = (ROOT / "demo" / "portcheck.toml").read_text()
    head, *kernels = re.split(r"(?m)^\[\[kernel\]\]\n", text)
    return head, [k.rstrip() for k in kernels]


def manifest(rows):
    head, kernels = demo_rows()
    out = [head]
    for i in range(rows):
        table = kernels[i % len(kernels)]
        table = re.sub(r'(?m)^name\s*=\s*"([^"]+)"', rf'name = "\1-{i}"', table)
        table = re.sub(r"BLOCK = \d+", f"BLOCK = {64 << (i // len(kernels) % 5)}", table)
        out.append("[[kernel]]\n" + table + "\n")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--rows", type=int, default=2000, help="[[kernel]] tables (a variant adds a row)")
    parser.add_argument("--binary", default=str(ROOT / "build" / "triton-portcheck"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="portcheck-static-scale-"))
    try:
        shutil.copy(ROOT / "demo" / "kernels.py", work / "kernels.py")
        (work / "portcheck.toml").write_text(manifest(args.rows))
        started = time.perf_counter()
        run = subprocess.run([args.binary, "check", "--manifest", str(work / "portcheck.toml"),
                              "--python", os.path.abspath(args.python) if "/" in args.python else args.python,
                              "--static-only", "--no-cache", "-q", "--json", str(work / "r.json")],
                             capture_output=True, text=True)
        wall = time.perf_counter() - started
        if run.returncode not in (0, 1):
            sys.exit(f"check exited {run.returncode}: {run.stderr.strip()[-2000:]}")
        report = json.loads((work / "r.json").read_text())
        static = report["environment"]["static"]["seconds"]
        cells = len(report["cells"])
        targets = len({c["target"] for c in report["cells"]})
        print(f"{cells // targets} rows ({args.rows} kernel tables, variants are rows), {cells} cells: static pre-checks {static:.2f} s, "
              f"whole --static-only run {wall:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
