#!/usr/bin/env python3
"""What one forked cell costs the machine outside Triton's compile, with nothing of ours in it,
with and without the forking process's memory in huge pages
(python/portcheck_worker/base/huge_pages.py): a process imports torch (and transformers' Llama
model where installed; not with --without-torch, Triton alone, as the fork server holds it) and
Triton, warms up one compile, and forks children that exit at once or compile one small kernel;
the same again after collapse_anonymous_memory(). Prints the collapse's time, and the medians of
the fork until the child runs, the child's life, its exit until reaped (the kernel frees what the
compile allocated) and its minor page faults. `--as-zygote` forks first, and measures from that
child after it imported a module of its own: memory inherited from a collapsed parent and then
written to.

    bench/fork_cost.py [--python .venv/bin/python] [--trials 15] [--as-zygote] [--without-torch]
"""
import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHILD = r'''
import gc, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
trials, collapse, as_zygote = int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1"
started = time.monotonic()
if sys.argv[5] == "1":
    import torch  # noqa: F401
    try:
        from transformers.models.llama import modeling_llama  # noqa: F401
    except ImportError:
        pass
from portcheck_worker.base import huge_pages
from portcheck_worker.compile.releases import import_triton
from portcheck_worker.forking.warm_up import warm_up
import_triton()
TARGET = [{"backend": "cuda", "arch": 90, "warp_size": 32}]
warm_up(TARGET)
gc.freeze()
imported = time.monotonic() - started

def anon_mib(name):
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith(name + ":"):
            return int(line.split()[1]) // 1024
    return 0

took = 0.0
if collapse:
    begun = time.monotonic()
    huge_pages.collapse_anonymous_memory()
    took = time.monotonic() - begun
if as_zygote:
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        sys.exit(0)
    warm_up([{"backend": "hip", "arch": "gfx942", "warp_size": 64}])  # writes to what it inherited
    if collapse:
        begun = time.monotonic()
        huge_pages.collapse_anonymous_memory()
        took = time.monotonic() - begun

def trial(compile_too):
    read_end, write_end = os.pipe()
    forked = time.monotonic_ns()
    pid = os.fork()
    if pid == 0:
        running = time.monotonic_ns()
        if compile_too:
            warm_up(TARGET)  # a real compile, Triton's cache bypassed
        os.write(write_end, f"{running} {time.monotonic_ns()}".encode())
        os._exit(0)
    os.close(write_end)
    _, _, usage = os.wait4(pid, 0)
    reaped = time.monotonic_ns()
    running, exiting = map(int, os.read(read_end, 100).split())
    os.close(read_end)
    return (running - forked) / 1e6, (exiting - running) / 1e6, (reaped - exiting) / 1e6, usage.ru_minflt

print(f"{'collapsed' if collapse else 'small pages'}{' (zygote child)' if as_zygote else ''}: "
      f"import {imported:.1f} s, anonymous {anon_mib('Anonymous')} MiB of which huge "
      f"{anon_mib('AnonHugePages')} MiB, collapse {took * 1000:.0f} ms (in this process)")
for compile_too in (False, True):
    runs = [trial(compile_too) for _ in range(trials)]
    fork_ms, life_ms, exit_ms, faults = (statistics.median(x) for x in zip(*runs))
    what = "compiles one kernel" if compile_too else "does nothing"
    print(f"  child that {what:<19}: fork -> running {fork_ms:5.2f} ms, life {life_ms:6.2f} ms, "
          f"exit -> reaped {exit_ms:5.2f} ms, {faults:6.0f} minor faults")
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--as-zygote", action="store_true")
    parser.add_argument("--without-torch", action="store_true")
    args = parser.parse_args()
    for collapse in ("0", "1"):
        # Triton's teardown messages (nanobind leak reports at exit) go to stderr: not ours to show.
        run = subprocess.run([args.python, "-c", CHILD, str(ROOT / "python"), str(args.trials), collapse,
                              "1" if args.as_zygote else "0", "0" if args.without_torch else "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            sys.exit(run.stderr[-2000:])
        print(run.stdout, end="")


if __name__ == "__main__":
    main()
