"""Test-only fault injection, so the crash, hang and memory paths are exercised with the real worker.

TRITON_PORTCHECK_INJECT="<stage>:<crash|hang|memory|exit|raise>[@<kernel name>]" makes the worker
misbehave when it is about to run that stage. `hang` and `memory` do it in a grandchild process, the
way a runaway ptxas would, so the supervisor's whole-tree limits are what stops them. `raise` is the
stage failing as a compiler error would (the only way to an LLVM error, in a backend stage that runs
no user code, on demand).

TRITON_PORTCHECK_INJECT="server:<exit|grow>@<N>" makes the first fork server die, or grow by
1 GiB and stall, when it receives its N-th cell, so that replacing it and retrying its cells is tested.

Several faults are separated by commas ("llir:raise@a,ttgir:crash@b"): each row its own.
"""
import os
import signal
import subprocess
import sys
import time

from . import channels

ENV = channels.ENV_INJECT


def parse():
    """Each fault asked for: (stage, kind, kernel name or count, or None)."""
    faults = []
    for spec in filter(None, os.environ.get(ENV, "").split(",")):
        kernel = None
        if "@" in spec:
            spec, kernel = spec.split("@", 1)
        stage, _, kind = spec.partition(":")
        faults.append((stage, kind, kernel))
    return faults


_server_ballast = []


def maybe_inject_server(forks_received):
    if os.environ.get(channels.ENV_SERVER_GENERATION) != "1":
        return
    for stage, kind, count in parse():
        if stage == "server" and str(forks_received) == count:
            _misbehave_as_server(kind)


def _misbehave_as_server(kind):
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
    for want_stage, kind, want_kernel in parse():
        if want_stage == stage and (not want_kernel or want_kernel == kernel_name):
            _misbehave(stage, kind)


def _misbehave(stage, kind):
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
    elif kind == "raise":
        raise RuntimeError(f"injected failure in stage {stage}")
    else:
        raise ValueError(f"{ENV}: unknown fault kind {kind!r}")
