"""One handler per request the tool runs as a cell, named after the message it handles
(protocol.schema.json): `handle_inspect` (one module's inspection), `handle_compile` (one cell)
and `handle_repro` (one cell's reproducer). The probe, which runs no user code, is server/probe.py.
"""
import sys

from ..base import messages, protocol
from ..compile import driver, keys, stages, static, tables
from ..compile.loader import KernelImportError
from ..compile.stages import make_target
from ..compile.releases import import_triton
from ..repro import writer


def handle_inspect(request, progress):
    """What the supervisor needs from one user module before compiling its cells: each row's
    argument names, the cells' cache keys and static predictions. Runs as a cell, under the limits
    of the rows it serves, so a fault at import is those rows' red cells and nobody else's.

    With no `target`, the module is imported under no driver, as no GPU would have it; an import
    that asks Triton's driver may differ from one target to the next, so its keys are left to an
    inspection per target (`asked_driver`), which imports the module under that target's
    stand-in driver, as its cells do, and keys them there."""
    progress.mark("import")
    target = request.target
    if target is not None:
        driver.install(make_target(target))
    watch = driver.DriverWatch() if target is None and request.keys else None
    try:
        kernels = {k.id: tables.kernel_arguments(k.kernel) for k in request.kernels}
    finally:
        if watch is not None:
            watch.stop()
    asked = watch is not None and watch.asked()
    if not request.keys:
        cache_keys = {}
    elif asked:
        cache_keys = {str(cell.id): None for cell in request.cells}
    else:
        cache_keys = keys.keys_for(request.cells, request.tool_version)
    return {
        "status": "ok",
        "kernels": kernels,
        "keys": cache_keys,
        "asked_driver": asked,
        "static": static.predictions(request.cells, request.targets) if request.predict else None,
    }


def handle_compile(request, progress):
    return stages.compile_cell(request, progress)


def handle_repro(request, progress):
    return writer.reproducer(request, progress)


# A cell's request names its kind (messages.CELL_REQUESTS): each kind's class, its handler.
_CELL_HANDLERS = {messages.CompileRequest: handle_compile, messages.InspectRequest: handle_inspect,
                  messages.ReproRequest: handle_repro}


def handle_cell(raw, progress):
    """A request run as a cell, whatever its kind, as read from its file: checked and converted
    (ProtocolError), then a user module imported under the cell's limits. A kernel's import error
    or a compiler failure is the cell's result."""
    request = messages.cell_request(raw)
    import_triton()
    try:
        return _CELL_HANDLERS[type(request)](request, progress)
    except KernelImportError as e:
        return e.result()
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
