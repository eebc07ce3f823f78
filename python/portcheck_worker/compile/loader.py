"""Imports the user's kernel: a module name, or a file path relative to the manifest's folder."""
import importlib
import importlib.util
import os
import sys
import traceback

from . import gpu_tensors_on_cpu, stdlib_guard, top_level_launches


class KernelImportError(Exception):
    """The user's module failed to import, or has no such function: never our bug."""

    def __init__(self, message, details):
        super().__init__(message)
        self.details = details

    def result(self):
        """The cell's result (the protocol's cell_failure, stage "import"), written here alone: for
        the compile that raised it, and for the inspection that found it first, whose answer the
        tool takes as the result of that row's cells."""
        return {"status": "error", "stage": "import",
                "error": {"type": "import", "message": str(self), "traceback": self.details or ""}, "stages": {}}


def add_import_folders(ref):
    """The manifest's folder first, then its `pythonpath` folders, all ahead of site-packages."""
    for folder in reversed([ref.import_root, *(ref.pythonpath or ())]):
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)


def load_kernel(ref):
    """The @triton.jit function a KernelRef names, its module imported (KernelImportError)."""
    add_import_folders(ref)
    try:
        try:
            module = _import_module(ref)
        except Exception as e:
            if "torch" not in sys.modules or not gpu_tensors_on_cpu.asked_for_a_missing_device(e):
                raise
            with gpu_tensors_on_cpu.made_on_the_cpu():  # a script's GPU tensors, at import
                module = _import_module(ref)
    except BaseException as e:  # a user's module can raise anything, SystemExit included
        raise KernelImportError(_import_failure(ref, e), bounded_traceback()) from None
    broken = stdlib_guard.broken_names()
    if broken:
        where = ref.file or ref.module
        raise KernelImportError(
            f"importing {where} broke the standard library Triton runs on: {', '.join(broken)}",
            "")
    fn = getattr(module, ref.function, None)
    if fn is None:
        raise KernelImportError(f"{module.__name__} has no attribute '{ref.function}'", "")
    return _unwrap(fn)


def _import_module(ref):
    with top_level_launches.skipped():  # a script's own launches at import: not a cell's
        if ref.file:
            return _import_file(ref.file)
        return importlib.import_module(ref.module)


def _import_failure(ref, error):
    """What the import did when it failed: the user's line it was on, the launches it made, and
    what to do about a top level that runs a script's work."""
    where = ref.file or ref.module
    line = _failing_user_line(error, ref.file)
    at = f" at {line}" if line else ""
    text = f"importing {where} failed{at}: {type(error).__name__}: {error}"
    text += top_level_launches.what_the_import_did()
    if line and not isinstance(error, (SyntaxError, ImportError)):
        text += f"; {top_level_launches.MAIN_GUARD_HINT}"
    return text


def _failing_user_line(error, path):
    """"file:line" of the deepest frame of the failure in the module's own file (a module by name:
    in any file of the manifest's folders is not known here; its own file is)."""
    found = ""
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if path and os.path.abspath(name) == os.path.abspath(path):
            found = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _import_file(path):
    # One stable module name per file, so helpers imported twice are the same objects.
    name = "portcheck_user_" + os.path.splitext(os.path.basename(path))[0]
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        # As the import system does for a failed import: a later attempt (a forked child under
        # its target's driver) must run the module again, not see a half-initialised one.
        del sys.modules[name]
        raise
    return module


def _unwrap(fn):
    """Autotuner and Heuristics objects wrap the JITFunction in `.fn`."""
    from triton.runtime.jit import JITFunction
    seen = 0
    while not isinstance(fn, JITFunction) and hasattr(fn, "fn") and seen < 8:
        fn = fn.fn
        seen += 1
    if not isinstance(fn, JITFunction):
        raise KernelImportError(f"{getattr(fn, '__name__', fn)!r} is not a @triton.jit function", "")
    return fn


def bounded_traceback(limit=8000):
    text = traceback.format_exc()
    return text if len(text) <= limit else text[-limit:]
