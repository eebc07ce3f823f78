"""Test-only fault injection, so the crash, hang and memory paths are exercised with the real worker.

TRITON_PORTCHECK_INJECT="<stage>:<crash|hang|memory|exit>[@<kernel name>]" makes the worker misbehave
when it is about to run that stage. `hang` and `memory` do it in a grandchild process, the way a
runaway ptxas would, so the supervisor's whole-tree limits are what stops them.

TRITON_PORTCHECK_INJECT="server:<exit|grow>@<N>" makes the first fork server die, or grow by
1 GiB and stall, when it receives its N-th cell, so that replacing it and retrying its cells is tested.
"""
import os
import signal
import subprocess
import sys
import time

ENV = "TRITON_PORTCHECK_INJECT"


def parse():
    spec = os.environ.get(ENV, "")
    if not spec:
        return None
    kernel = None
    if "@" in spec:
        spec, kernel = spec.split("@", 1)
    stage, _, kind = spec.partition(":")
    return stage, kind, kernel


_server_ballast = []


def maybe_inject_server(forks_received):
    fault = parse()
    if fault is None or fault[0] != "server" or os.environ.get("PORTCHECK_SERVER_GENERATION") != "1":
        return
    _, kind, count = fault
    if str(forks_received) != count:
        return
    if kind == "exit":
        os._exit(75)
    elif kind == "grow":
        ballast = bytearray(1 << 30)
        for i in range(0, len(ballast), 4096):  # touch every page so it counts as resident
            ballast[i] = 1
        _server_ballast.append(ballast)
        # Hold the cell a while, as a server swapping under its own weight would: the tool checks
        # the server's size about once a second, and on a fast machine the remaining cells could
        # all finish before that, leaving nothing held to retry and the test without its subject.
        time.sleep(3)


def maybe_inject(stage, kernel_name):
    fault = parse()
    if fault is None:
        return
    want_stage, kind, want_kernel = fault
    if want_stage != stage or (want_kernel and want_kernel != kernel_name):
        return
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif kind == "exit":
        os._exit(70)
    elif kind == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        time.sleep(3600)
    elif kind == "memory":
        bomb = ("import time\nchunks = []\n"
                "while True:\n    chunks.append(bytearray(64 << 20))\n    time.sleep(0.01)\n")
        subprocess.Popen([sys.executable, "-c", bomb]).wait()
    else:
        raise ValueError(f"{ENV}: unknown fault kind {kind!r}")
