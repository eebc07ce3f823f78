"""Entry point: `python -m portcheck_worker probe|cell|targets REQUEST RESULT [PROGRESS]`.

Exit status 0 means a result file was written (a compile failure is still a result); anything
else is a worker problem the supervisor classifies from the exit status and stderr.
"""
import os
import sys

from . import PROTOCOL_VERSION, protocol

EXIT_NO_TRITON = 3


def _import_triton():
    try:
        import triton
    except Exception as e:  # ImportError, or a broken install raising anything
        sys.stderr.write(f"portcheck-worker: cannot import triton: {type(e).__name__}: {e}\n")
        sys.exit(EXIT_NO_TRITON)
    return triton


def _site_packages():
    import site
    try:
        return [p for p in site.getsitepackages() if os.path.isdir(p)]
    except AttributeError:  # some virtualenv versions lack it
        return []


def probe(request):
    """The environment alone: it never imports the user's modules, because it runs in the fork
    server (or with no cell's limits), where a module's crash, hang or memory bomb at import would
    take the whole run down. What needs their modules is `inspect`, run as a cell."""
    triton = _import_triton()
    from . import static, tables
    return {
        "protocol": PROTOCOL_VERSION,
        "python": {"version": sys.version.split()[0], "executable": sys.executable},
        "site_packages": _site_packages(),
        "triton": {"version": triton.__version__, "path": os.path.dirname(triton.__file__)},
        "option_fields": tables.option_fields(),
        "targets": [tables.describe_target(t) for t in request.get("targets", [])],
        # The tables the static pre-checks use, read from Triton alone (`targets` shows them).
        "static": {"tables": static.tables(request.get("targets", []))} if request.get("predict") else None,
    }


def inspect(request, progress):
    """What the supervisor needs from one user module before compiling its cells: each row's
    argument names, the cells' cache keys and static predictions. Runs as a cell, under the limits
    of the rows it serves, so a fault at import is those rows' red cells and nobody else's."""
    from . import keys, static, tables
    progress.mark("import")
    return {
        "status": "ok",
        "kernels": {k["id"]: tables.kernel_arguments(k["kernel"]) for k in request.get("kernels", [])},
        "keys": keys.keys_for(request.get("cells", []), request.get("tool_version", ""))
        if request.get("keys", True) else {},
        "static": static.predictions(request.get("cells", []), request.get("targets", []))
        if request.get("predict", False) else None,
    }


def cell(request, progress):
    _import_triton()
    if "inspect" in request:
        return inspect(request["inspect"], progress)
    from . import stages
    from .loader import KernelImportError
    try:
        return stages.compile_cell(request, progress)
    except KernelImportError as e:
        return {"status": "error", "stage": "import", "error": {"type": "import", "message": str(e),
                                                                 "traceback": e.details}, "stages": {}}
    except stages.StageError as e:
        return stages.failure_result(e)


def run_cell_files(request_path, result_path, progress_path):
    request = protocol.read_request(request_path)
    progress = protocol.ProgressLog(progress_path)
    try:
        result = cell(request, progress)
    finally:
        progress.close()
    protocol.write_result(result_path, result)


def _inherit_site():
    """A version environment holds only Triton; the user's other imports (torch, their package)
    come from the invoking interpreter's site-packages, appended *after* this environment's own
    so that its Triton wins."""
    for path in os.environ.get("PORTCHECK_INHERIT_SITE", "").split(os.pathsep):
        if path and path not in sys.path:
            sys.path.append(path)


def main(argv):
    _inherit_site()
    if argv[:1] == ["serve"]:
        _import_triton()
        from . import server
        return server.main()
    if len(argv) < 3 or argv[0] not in ("probe", "cell"):
        sys.stderr.write("usage: python -m portcheck_worker probe|cell REQUEST RESULT [PROGRESS] | serve\n")
        return 2
    command, request_path, result_path = argv[:3]
    if command == "probe":
        protocol.write_result(result_path, probe(protocol.read_request(request_path)))
    else:
        run_cell_files(request_path, result_path, argv[3] if len(argv) > 3 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
