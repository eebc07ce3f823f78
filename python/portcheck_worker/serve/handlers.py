"""One handler per request the tool sends a worker, named after the message it handles
(protocol.schema.json): `handle_probe` (the environment), and, run as a cell, `handle_inspect`
(one module's inspection), `handle_compile` (one cell) and `handle_repro` (one cell's reproducer).
Both entry points use them: `python -m portcheck_worker probe|cell` (__main__.py) and the fork
server (server.py), so neither imports the other.
"""
import os
import sys

from ..base import protocol, signal_guard
from ..compile import keys, releases, stages, static, tables
from ..compile.loader import KernelImportError
from ..repro import writer


def import_triton():
    try:
        import triton
    except Exception as e:  # ImportError, or a broken install raising anything
        sys.stderr.write(f"portcheck-worker: cannot import triton: {type(e).__name__}: {e}\n")
        sys.exit(protocol.EXIT_ENVIRONMENT)
    return triton


def _site_packages():
    import site
    try:
        return [p for p in site.getsitepackages() if os.path.isdir(p)]
    except AttributeError:  # some virtualenv versions lack it
        return []


def handle_probe(request):
    """The environment alone: it never imports the user's modules, because it runs in the fork
    server (or with no cell's limits), where a module's crash, hang or memory bomb at import would
    take the whole run down. What needs their modules is `inspect`, run as a cell.

    The protocol is checked before Triton is imported: a worker of another install is the problem
    to report whether or not Triton imports."""
    protocol.check_tool_protocol(request)
    protocol.check("probe_request", request)
    triton = import_triton()
    try:
        release = releases.current()
    except releases.UnsupportedRelease as e:
        sys.stderr.write(f"portcheck-worker: {e}\n")
        sys.exit(protocol.EXIT_ENVIRONMENT)
    release.prepare()  # before `targets` shows the AMD linker
    return {
        "protocol": protocol.PROTOCOL_VERSION,
        "worker": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "python": {"version": sys.version.split()[0], "executable": sys.executable},
        "site_packages": _site_packages(),
        "triton": {"version": triton.__version__, "path": os.path.dirname(triton.__file__),
                   "family": release.family},
        "option_fields": tables.option_fields(),
        "targets": [tables.describe_target(t) for t in request.get("targets", [])],
        # The tables the static pre-checks use, read from Triton alone (`targets` shows them).
        "static": {"tables": static.tables(request.get("targets", []))} if request.get("predict") else None,
        # None when cells' code cannot signal the tool (signal_guard), else why it can.
        "signal_guard_off": signal_guard.check(),
    }


def handle_inspect(request, progress):
    """What the supervisor needs from one user module before compiling its cells: each row's
    argument names, the cells' cache keys and static predictions. Runs as a cell, under the limits
    of the rows it serves, so a fault at import is those rows' red cells and nobody else's."""
    progress.mark("import")
    return {
        "status": "ok",
        "kernels": {k["id"]: tables.kernel_arguments(k["kernel"]) for k in request["kernels"]},
        "keys": keys.keys_for(request["cells"], request["tool_version"]) if request["keys"] else {},
        "static": static.predictions(request["cells"], request["targets"]) if request["predict"] else None,
    }


def handle_compile(request, progress):
    return stages.compile_cell(request, progress)


def handle_repro(request, progress):
    return writer.reproducer(request, progress)


# A cell's request names its kind; each kind is checked against its definition, then handled.
_CELL_HANDLERS = {"compile": handle_compile, "inspect": handle_inspect, "repro": handle_repro}


def handle_cell(request, progress):
    """A request run as a cell, whatever its kind: a user module imported under the cell's
    limits. A kernel's import error or a compiler failure is the cell's result."""
    kind = request.get("kind") if isinstance(request, dict) else None
    if kind not in _CELL_HANDLERS:
        raise protocol.ProtocolError(f"protocol error: a cell request of kind {kind!r} "
                                     f"(protocol {protocol.PROTOCOL_VERSION} knows {sorted(_CELL_HANDLERS)})")
    protocol.check(f"{kind}_request", request)
    import_triton()
    try:
        return _CELL_HANDLERS[kind](request, progress)
    except KernelImportError as e:
        return {"status": "error", "stage": "import", "error": {"type": "import", "message": str(e),
                                                                 "traceback": e.details}, "stages": {}}
    except stages.StageError as e:
        return stages.failure_result(e)


def run_cell_files(request_path, result_path, progress_path):
    """Runs the cell the files name; returns its result, as written. A request that breaks the
    protocol is one line on stderr and exit 4, as the tool exits for a bug of its own."""
    request = protocol.read_request(request_path)
    progress = protocol.ProgressLog(progress_path)
    try:
        result = handle_cell(request, progress)
    except protocol.ProtocolError as e:
        sys.stderr.write(f"portcheck-worker: {e}\n")
        raise SystemExit(protocol.EXIT_BUG)
    finally:
        progress.close()
    protocol.write_result(result_path, result)
    return result
