#!/usr/bin/env python3
"""`capture --mode record --fake-gpu --as cuda:90,hip:gfx942` of torch.compile's workloads
(tests/fixtures/inductor/compile_model.py), as test_capture_inductor.py runs it: wall clock, CPU
seconds (user + system of the tool and everything it ran) and the rows written, median of three
runs, each with a fresh Inductor cache. --root names the checkout whose build/triton-portcheck
and worker run (an older commit's, to compare).

    bench/fake_gpu_capture.py [--root .] [--python .venv/bin/python] >> bench/results/fake-gpu-capture.txt
"""
import argparse
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def capture_once(root, python, work):
    shutil.copy(ROOT / "tests" / "fixtures" / "inductor" / "compile_model.py", work)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(work / "inductor-cache"))
    cpu, started = children_cpu(), time.monotonic()
    run = subprocess.run([root / "build" / "triton-portcheck", "capture", "--mode", "record", "--fake-gpu", "--as",
                          "cuda:90,hip:gfx942", "-o", "rows.toml", "--", python, "compile_model.py"],
                         cwd=work, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, children_cpu() - cpu
    rows = (work / "rows.toml").read_text().count("[[kernel]]") if run.returncode == 0 else 0
    return wall, cpu, rows, run.returncode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                            text=True).stdout.strip()
    runs = []
    for _ in range(3):
        with tempfile.TemporaryDirectory(prefix="portcheck-fake-gpu-") as work:
            runs.append(capture_once(root, args.python, pathlib.Path(work)))
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    print(f"commit {commit}, {os.cpu_count()} cores: wall {wall:.1f} s, CPU {cpu:.1f} s, "
          f"rows {sorted({r[2] for r in runs})}, exit {sorted({r[3] for r in runs})} (median of 3)")


if __name__ == "__main__":
    main()
