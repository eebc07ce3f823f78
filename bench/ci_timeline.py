"""Where `make test`'s integration step spends its time and its CPU, test by test.

With PORTCHECK_CI_TIMELINE=FILE in its environment, the integration tests' conftest.py registers
a Recorder: every process of the session (each pytest-xdist worker) appends one JSON line per test:
its worker, xdist group, wall-clock start and end (setup to teardown), and the CPU seconds it used,
its own and those of the processes it waited for (the tool, pip, compilers). bench/ci_time.sh sets
it. The variable is taken out of the environment at once (the workers get the file from xdist), so
that a pytest a test starts records nothing here.

As a script (`python3 bench/ci_timeline.py FILE`), it prints each worker's busy and idle time and
the groups in the order each worker ran them, with their wall and CPU seconds: on two cores the
step takes at least its CPU seconds / 2, and a worker that finishes early shows the imbalance.
"""
import json
import os
import resource
import sys
import time
from collections import defaultdict

import pytest


def _cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _group(item):
    marker = item.get_closest_marker("xdist_group")
    return marker.args[0] if marker else item.module.__name__


def recorder(config):
    """The Recorder this session asked for (None without PORTCHECK_CI_TIMELINE)."""
    path = os.environ.pop("PORTCHECK_CI_TIMELINE", None)
    if hasattr(config, "workerinput"):
        path = config.workerinput.get("ci_timeline")
    return Recorder(path) if path else None


class Recorder:
    def __init__(self, path):
        self.path = path

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):  # pytest-xdist, in the controller: each worker's file
        node.workerinput["ci_timeline"] = self.path

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        started, cpu = time.time(), _cpu_seconds()
        yield
        line = json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "group": _group(item),
                           "test": item.nodeid, "start": started, "end": time.time(),
                           "cpu": _cpu_seconds() - cpu})
        with open(self.path, "a") as f:
            f.write(line + "\n")


def summary(path):
    rows = [json.loads(line) for line in open(path)]
    if not rows:
        return "no tests recorded"
    origin = min(r["start"] for r in rows)
    out = [f"{'worker':8} {'busy s':>7} {'ends at s':>9} {'CPU s':>7}"]
    by_worker = defaultdict(list)
    for r in rows:
        by_worker[r["worker"]].append(r)
    for worker, tests in sorted(by_worker.items()):
        busy = sum(t["end"] - t["start"] for t in tests)
        out.append(f"{worker:8} {busy:7.0f} {max(t['end'] for t in tests) - origin:9.0f} "
                   f"{sum(t['cpu'] for t in tests):7.0f}")
    out.append(f"{'all':8} {'':7} {'':9} {sum(r['cpu'] for r in rows):7.0f}")
    out.append("")
    out.append(f"{'worker':8} {'from s':>6} {'to s':>6} {'wall s':>6} {'CPU s':>6}  group")
    spans = {}
    for r in rows:
        key = (r["worker"], r["group"])
        first, last, cpu = spans.get(key, (r["start"], r["end"], 0.0))
        spans[key] = (min(first, r["start"]), max(last, r["end"]), cpu + r["cpu"])
    for (worker, group), (first, last, cpu) in sorted(spans.items(), key=lambda kv: (kv[0][0], kv[1][0])):
        out.append(f"{worker:8} {first - origin:6.0f} {last - origin:6.0f} {last - first:6.0f} {cpu:6.0f}  {group}")
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(sys.argv[1]))
