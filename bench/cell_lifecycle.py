#!/usr/bin/env python3
"""What one forked cell costs the machine outside Triton's compile, with nothing of ours in it:
a process with Triton imported and warmed up (as the fork server is) forks children that each
compile one small kernel for cuda:90 and exit. Prints the medians of the fork until the child
runs, the compile, the exit until the parent has reaped the child (the kernel frees what the
compile allocated), and the child's minor page faults.

This is the part of bench/cell_overhead.py's "outside compile" time that a fresh process per cell
cannot avoid.

    bench/cell_lifecycle.py [--python .venv/bin/python] [--trials 20]
"""
import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHILD = r'''
import gc, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from portcheck_worker.compile.releases import import_triton
from portcheck_worker.forking.warm_up import warm_up
import_triton()
TARGET = [{"backend": "cuda", "arch": 90, "warp_size": 32}]
warm_up(TARGET)
gc.freeze()  # as the server does before each fork

def trial(compile_too):
    read_end, write_end = os.pipe()
    forked = time.monotonic_ns()
    pid = os.fork()
    if pid == 0:
        started = time.monotonic_ns()
        if compile_too:
            warm_up(TARGET)  # a real compile, Triton's cache bypassed
        os.write(write_end, f"{started} {time.monotonic_ns()}".encode())
        os._exit(0)
    os.close(write_end)
    _, _, usage = os.wait4(pid, 0)
    reaped = time.monotonic_ns()
    started, exiting = map(int, os.read(read_end, 100).split())
    os.close(read_end)
    return ((started - forked) / 1e6, (exiting - started) / 1e6, (reaped - exiting) / 1e6,
            usage.ru_minflt)

for compile_too in (False, True):
    runs = [trial(compile_too) for _ in range(int(sys.argv[2]))]
    fork_ms, life_ms, exit_ms, faults = (statistics.median(x) for x in zip(*runs))
    what = "compiles one kernel" if compile_too else "does nothing"
    print(f"child that {what:<19}: fork -> running {fork_ms:5.2f} ms, life {life_ms:6.2f} ms, "
          f"exit -> reaped {exit_ms:5.2f} ms, {faults:6.0f} minor faults")
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    # Triton's teardown messages (nanobind leak reports at exit) go to stderr: not ours to show.
    run = subprocess.run([args.python, "-c", CHILD, str(ROOT / "python"), str(args.trials)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(run.stderr[-2000:])
    print(run.stdout, end="")


if __name__ == "__main__":
    main()
