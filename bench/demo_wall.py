#!/usr/bin/env python3
"""Wall time of `check --demo --no-cache` for one or more binaries, runs interleaved, median.

    bench/demo_wall.py --python .venv/bin/python [--runs 3] [--isolation fork] BINARY [BINARY...]

Used to measure what a change to the run's structure costs (issue 14: user modules imported
per cell under its limits instead of once in the fork server). Interleaving the binaries'
runs spreads a busy machine's noise over all of them alike.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def one_run(binary, python, isolation, workdir):
    out = os.path.join(workdir, "report.json")
    env = dict(os.environ, TRITON_PORTCHECK_HOME=os.path.join(workdir, "home"))
    proc = subprocess.run([binary, "check", "--demo", "--no-cache", "--isolation", isolation, "--python", python,
                           "--json", out], cwd=workdir, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{binary}: exit {proc.returncode}\n{proc.stderr}")
    report = json.load(open(out))
    compiled = [c["compile_s"] for c in report["cells"] if c.get("compile_s")]
    jobs = report["environment"]["options"]["jobs"]
    floor = max(sum(compiled) / jobs, max(compiled, default=0))
    return report["wall_s"], len(report["cells"]), floor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--isolation", default="fork")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    walls = {b: [] for b in args.binaries}
    floors = {b: [] for b in args.binaries}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="demo-wall-") as workdir:
        for _ in range(args.runs):
            for binary in args.binaries:
                wall, cells, floor = one_run(binary, args.python, args.isolation, workdir)
                walls[binary].append(wall)
                floors[binary].append(floor)
    # The floor (max(sum of compile times / jobs, longest cell)) is Triton's own time; the goal
    # of issues 14 and 43 is a wall within 1.2 x floor + 1 s.
    # A load above the cores before the runs is other work's: say so, since the walls then count it.
    shared = " (other work shares this machine)" if load_before > os.cpu_count() else ""
    print(f"`--isolation {args.isolation}`, {os.cpu_count()} cores, load average {load_before:.1f} before the runs "
          f"and {os.getloadavg()[0]:.1f} after{shared}.\n")
    print("| binary | cells | runs | median wall s | median floor s | wall / floor | 1.2 x floor + 1 s | all walls |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")
    for binary, values in walls.items():
        wall, floor = statistics.median(values), statistics.median(floors[binary])
        print(f"| {binary} | {cells} | {len(values)} | {wall:.2f} | {floor:.2f} | {wall / floor:.2f} | "
              f"{1.2 * floor + 1:.2f} | {', '.join(f'{v:.2f}' for v in values)} |")


if __name__ == "__main__":
    main()
