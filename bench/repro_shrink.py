#!/usr/bin/env python3
"""`repro --shrink` on the demo's failures: one cell of each failure group (the first, as the
Markdown summary's repro line), its kernel's lines before and after, the time, the candidates
tried, and whether the shrunk file still reproduces the cell's fingerprint (the tool checks it and
writes the whole kernel when it does not).

    bench/repro_shrink.py [--python .venv/bin/python] [--shrink-time 60] > bench/results/repro-shrink.txt
"""
import argparse
import json
import pathlib
import re
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOL = ROOT / "build" / "triton-portcheck"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--shrink-time", default="60")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcheck-shrink-bench-") as work:
        work = pathlib.Path(work)
        subprocess.run([TOOL, "check", "--demo", "--python", args.python, "--json", work / "demo.json"],
                       capture_output=True, check=False)
        firsts = {}
        for cell in json.loads((work / "demo.json").read_text())["cells"]:
            if cell["status"] != "ok":
                firsts.setdefault(cell["fingerprint"], cell)
        print(f"{'cell':34} {'kind':16} {'lines':>9} {'seconds':>8} {'tried':>6}  reproduces")
        for fingerprint, cell in firsts.items():
            started = time.monotonic()
            run = subprocess.run([TOOL, "repro", cell["row"], "--demo", "-t", cell["target"], "--shrink",
                                  "--shrink-time", args.shrink_time, "--python", args.python,
                                  "-o", work / "repro.py"], capture_output=True, text=True)
            wall = time.monotonic() - started
            shrink = re.search(r"from (\d+) to (\d+) lines in ([\d.]+) s, (\d+) candidates", run.stdout)
            before, after, seconds, tried = shrink.groups() if shrink else ("?", "?", "?", "?")
            whole = "whole kernel kept" if "writing the whole kernel instead" in run.stdout else ""
            same = f"yes ({fingerprint})" if run.returncode == 0 else f"no (exit {run.returncode})"
            print(f"{cell['row'] + ' on ' + cell['target']:34} {cell['kind']:16} {before:>4} -> {after:<3}"
                  f" {seconds:>7}s {tried:>6}  {same} {whole}  [repro wall {wall:.1f} s]")


if __name__ == "__main__":
    main()
