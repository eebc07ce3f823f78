"""The steps of `make test`, from the recipe lines bench/ci_step_shell.sh recorded, and how much
of the machine the run had, from /proc/stat samples (bench/ci_time.sh takes both).

    python3 bench/ci_steps.py STEPS PROCSTAT OUR_CPU

STEPS holds one line per recipe line make ran: start, end, CPU seconds, text. A step is named by
what its lines run (STEP_PATTERNS); a line that starts a make is left out (its lines are there
themselves). Each step prints its span from the run's start, its wall seconds (the span: steps
overlap) and its CPU seconds. PROCSTAT holds `epoch busy idle` lines (jiffies of the whole
machine, every few seconds): the idle core-seconds during a step's span say whether it was short
of cores or of work, and the CPU seconds other users took during the run (the machine's busy time
less OUR_CPU, the run's own) how much their load weighs on its wall clock.
"""
import os
import re
import sys
from collections import OrderedDict

# First match wins; the order is `make test`'s. Lines of a make that a line started (ours, or one
# CMake generated for a build folder made with its Makefile generator) count in that line.
STEP_PATTERNS = (
    ("make (nested)", r"^(scripts/run-when-idle )?make |/gmake |CMakeFiles/"),
    ("deps", r"dpkg -s|apt-get"),
    ("venv + test-venv", r"-m venv|pip install|touch \.venv"),
    ("tool", r"cmake (-S \. -B build |--build build )"),
    ("sanitizer build", r"cmake (-S \. -B build-asan|--build build-asan)"),
    ("integration", r"-m pytest"),
    ("unit-asan (ctest)", r"ctest "),
    ("fuzz-smoke", r"fuzz_|fuzz-smoke"),
)
TICKS = os.sysconf("SC_CLK_TCK")


def read_steps(path):
    steps = OrderedDict((name, []) for name, _ in STEP_PATTERNS)
    steps["other"] = []
    for line in open(path):
        start, end, cpu, text = line.rstrip("\n").split(" ", 3)
        text = text[3:] if text.startswith("-c ") else text  # make runs SHELL -c LINE
        name = next((n for n, pattern in STEP_PATTERNS if re.search(pattern, text)), "other")
        steps[name].append((float(start), float(end), float(cpu)))
    steps.pop("make (nested)")
    return OrderedDict((k, v) for k, v in steps.items() if v)


def read_procstat(path):
    return [tuple(float(x) for x in line.split()) for line in open(path) if len(line.split()) == 3]


def machine_between(samples, first, last):
    """(busy, idle) core-seconds of the whole machine between two instants (the samples nearest
    to them, taken every few seconds), or None without samples."""
    before = [x for x in samples if x[0] <= first] or samples[:1]
    after = [x for x in samples if x[0] >= last] or samples[-1:]
    if not before or not after or after[0][0] <= before[-1][0]:
        return None
    (_, busy0, idle0), (_, busy1, idle1) = before[-1], after[0]
    return (busy1 - busy0) / TICKS, (idle1 - idle0) / TICKS


def summary(steps_path, procstat_path, our_cpu):
    steps = read_steps(steps_path)
    samples = read_procstat(procstat_path)
    lines = [line for step in steps.values() for line in step]
    origin, finish = min(s for s, _, _ in lines), max(e for _, e, _ in lines)
    out = [f"{'step':20} {'from s':>6} {'to s':>6} {'wall s':>6} {'CPU s':>6} {'idle s':>6}"]
    for name, step in steps.items():
        first, last = min(s for s, _, _ in step), max(e for _, e, _ in step)
        machine = machine_between(samples, first, last)
        idle = "" if machine is None else f"{machine[1]:6.0f}"
        out.append(f"{name:20} {first - origin:6.0f} {last - origin:6.0f} {last - first:6.0f} "
                   f"{sum(c for _, _, c in step):6.0f} {idle:>6}")
    machine = machine_between(samples, origin, finish)
    if machine is not None:
        busy, idle = machine
        out.append(f"the machine during the run: {busy:.0f} core-seconds busy, {idle:.0f} idle; "
                   f"this run's CPU {our_cpu:.0f} s, other users' {busy - our_cpu:.0f} s")
    out.append("(idle s: the machine's idle core-seconds during the step's span; steps overlap)")
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(sys.argv[1], sys.argv[2], float(sys.argv[3])))
