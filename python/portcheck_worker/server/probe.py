"""The probe, the tool's first request (protocol.schema.json's probe_request): the environment -
Python, Triton, each target as the installed backend decides it - and the protocol each side
speaks. Answered by the fork server (server.py) or alone, by `python -m portcheck_worker probe`
(`--isolation process`); neither imports a user's module.
"""
import os
import site
import sys

from ..base import protocol, signal_guard
from ..compile import releases, static, tables
from ..compile.releases import import_triton


def _site_packages():
    try:
        return [p for p in site.getsitepackages() if os.path.isdir(p)]
    except AttributeError:  # some virtualenv versions lack it
        return []


def handle_probe(request):
    """The environment alone: it never imports the user's modules, because it runs in the fork
    server (or with no cell's limits), where a module's crash, hang or memory bomb at import would
    take the whole run down. What needs their modules is `inspect`, run as a cell.

    `request`: a messages.ProbeRequest, read (messages.probe_request) before Triton is imported: a
    worker of another install is the problem to report whether or not Triton imports."""
    triton = import_triton()
    try:
        release = releases.current()
    except releases.UnsupportedRelease as e:
        sys.stderr.write(f"portcheck-worker: {e}\n")
        sys.exit(protocol.EXIT_ENVIRONMENT)
    release.prepare()  # before `targets` shows the AMD linker
    return {
        "protocol": protocol.PROTOCOL_VERSION,
        "worker": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # the package
        "python": {"version": sys.version.split()[0], "executable": sys.executable},
        "site_packages": _site_packages(),
        "triton": {"version": triton.__version__, "path": os.path.dirname(triton.__file__),
                   "family": release.family},
        "option_fields": tables.option_fields(),
        "targets": [tables.describe_target(t) for t in request.targets],
        # The tables the static pre-checks use, read from Triton alone (`targets` shows them).
        "static": {"tables": static.tables(request.targets)} if request.predict else None,
        # None when cells' code cannot signal the tool (signal_guard), else why it can.
        "signal_guard_off": signal_guard.check(),
    }
