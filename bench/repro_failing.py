#!/usr/bin/env python3
"""The reproducers of every failing cell of the demo, written two ways: one `repro ROW -t TARGET`
per cell (each runs its own check, then a second one that writes the file, then the file), and
one `repro --failing` (one check, one second pass for every file, then each file). Wall clock and
CPU seconds (user + system of the tool and everything it ran), and how many files reproduce.

    bench/repro_failing.py [--python .venv/bin/python] > bench/results/repro-failing.txt
"""
import argparse
import json
import os
import pathlib
import re
import resource
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOL = ROOT / "build" / "triton-portcheck"


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(runs):
    """Runs each command in turn: (wall s, CPU s, the finished processes)."""
    cpu, started = children_cpu(), time.monotonic()
    done = [subprocess.run(command, capture_output=True, text=True, cwd=cwd) for command, cwd in runs]
    return time.monotonic() - started, children_cpu() - cpu, done


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcheck-repro-failing-") as work:
        work = pathlib.Path(work)
        subprocess.run([TOOL, "check", "--demo", "--python", args.python, "--json", work / "demo.json"],
                       capture_output=True, check=False)
        cells = [(c["row"], c["target"]) for c in json.loads((work / "demo.json").read_text())["cells"]
                 if c["status"] != "ok"]
        (work / "one").mkdir()
        one = [([TOOL, "repro", row, "-t", target, "--demo", "--python", args.python, "-o",
                 work / "one" / re.sub(r"[^A-Za-z0-9]", "_", f"repro_{row}_{target}.py")], work)
               for row, target in cells]
        one_wall, one_cpu, one_done = timed(one)
        one_same = sum(p.returncode == 0 for p in one_done)
        every = [([TOOL, "repro", "--failing", "--demo", "--python", args.python, "-o", work / "every"], work)]
        every_wall, every_cpu, (every_done,) = timed(every)
        every_same = every_done.stdout.count(" reproduces ")
        print(f"commit {subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()}, "
              f"{os.cpu_count()} cores, the demo's {len(cells)} failing cells")
        print(f"{'how':34} {'wall s':>7} {'CPU s':>7}  files that reproduce")
        print(f"{'repro ROW -t TARGET, once a cell':34} {one_wall:7.1f} {one_cpu:7.1f}  {one_same} of {len(cells)}")
        print(f"{'repro --failing':34} {every_wall:7.1f} {every_cpu:7.1f}  {every_same} of {len(cells)}"
              f" (exit {every_done.returncode})")


if __name__ == "__main__":
    main()
