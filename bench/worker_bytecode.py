#!/usr/bin/env python3
"""What a worker process's start costs with and without the worker package's bytecode compiled
(`make worker-bytecode`): a fresh interpreter imports the modules a fork server and a cell load
(not Triton's, whose bytecode pip compiled), with PYTHONDONTWRITEBYTECODE as the tool runs its
workers, from a copy of python/ with no __pycache__ and from one compiled by compileall. Median
CPU seconds (user + system) of 15 starts each.

    bench/worker_bytecode.py [--python .venv/bin/python] > bench/results/worker-bytecode.txt
"""
import argparse
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = ("portcheck_worker.__main__", "portcheck_worker.server.server", "portcheck_worker.cell.handlers",
           "portcheck_worker.compile.stages", "portcheck_worker.repro.inline")


def start_cpu(python, folder):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=str(folder), PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([python, "-c", "import " + ", ".join(MODULES)], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcheck-bytecode-") as work:
        figures = {}
        for compiled in (False, True):
            folder = pathlib.Path(work) / ("compiled" if compiled else "sources")
            shutil.copytree(ROOT / "python" / "portcheck_worker", folder / "portcheck_worker",
                            ignore=shutil.ignore_patterns("__pycache__"))
            if compiled:
                subprocess.run([args.python, "-m", "compileall", "-q", folder / "portcheck_worker"], check=True)
            figures[compiled] = statistics.median(start_cpu(args.python, folder) for _ in range(15))
    print(f"{os.cpu_count()} cores, {sys.platform}; median CPU of a worker start's imports, 15 starts each")
    print(f"sources only (no __pycache__)   {figures[False] * 1000:6.0f} ms")
    print(f"bytecode compiled (compileall)  {figures[True] * 1000:6.0f} ms")


if __name__ == "__main__":
    main()
