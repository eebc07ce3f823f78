"""Code run once a module has been imported, without importing it: the capture hook patches
Triton, torch and Inductor this way, whenever (and if ever) the user's program imports them.
"""
import importlib
import importlib.abc
import sys

from . import inductor as capture_inductor


def warn(message):
    sys.stderr.write(f"triton-portcheck capture: {message}\n")


def after_import(name, callback):
    """`callback(module)` once the module `name` has been imported: now, or when it is. The
    callbacks of one name run in the order they were given, from one finder (two finders of
    one name would each ask the other)."""
    if name in sys.modules:
        _run_callbacks(sys.modules[name], [callback])
        return
    waiting = next((f for f in sys.meta_path if isinstance(f, _AfterImport) and f.name == name), None)
    if waiting is not None:
        waiting.callbacks.append(callback)
    else:
        sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs callbacks once a module has finished executing, without importing it."""

    def __init__(self, name, callback):
        self.name = name
        self.callbacks = [callback]

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _AfterImport) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                # Stays on sys.meta_path until the package has executed: importlib.util.find_spec
                # (torch probes for Triton this way) asks without importing.
                spec.loader = _CallbackLoader(spec.loader, self._done)
                return spec
        return None

    def _done(self, module):
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        _run_callbacks(module, self.callbacks)


def _run_callbacks(module, callbacks):
    """Each hook of an imported module, whether it was imported before the hook or after: one
    that fails leaves the others, and the program, be."""
    for callback in callbacks:
        try:
            callback(module)
        except Exception as e:
            warn(f"cannot hook {module.__name__} ({type(e).__name__}: {e}); "
                  f"{_UNHOOKED.get(module.__name__, 'nothing will be recorded')}")


# What a module the hook could not patch means for the capture.
_UNHOOKED = {
    "torch": "host code that asks torch about the device sees the real one, not the persona",
    capture_inductor.MODULE: "the kernels torch.compile generates will not be recorded",
}


class _CallbackLoader(importlib.abc.Loader):

    def __init__(self, inner, callback):
        self._inner = inner
        self._callback = callback

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._callback(module)

    def __getattr__(self, name):  # resource readers and the like
        return getattr(self._inner, name)
