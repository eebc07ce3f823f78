"""At-fork handlers that the user's own code registers while a zygote imports it.

With `--isolation process` a cell imports its module and compiles in the same process: nothing
forks between the two, so an `os.register_at_fork` handler the import registers runs only at a
fork the cell's own code makes later. A zygote imports the module once and forks every cell from
it, so every such handler would run at each cell's birth (`after_in_child`, which may exit, close
descriptors, change the environment) and in the zygote around each fork (`before`,
`after_in_parent`): a verdict that exists only under `--isolation fork`.

So while a zygote imports, a handler registered from the user's own code is recorded instead of
registered, and each cell the zygote (or a zygote forked from it) forks registers it for real as
it starts: the cell's own later forks run it, as they would in a fresh process, and its birth does
not. Handlers registered from the standard library or an installed package are registered as
usual: they exist to keep a fork safe (logging's lock, torch's thread pools) and a cell must
inherit that, as any fork of the library would. A user's package installed into the environment
counts as installed.
"""
import contextlib
import functools
import os
import site
import sys
import sysconfig

_REAL = os.register_at_fork
_DEFERRED = []  # (before, after_in_child, after_in_parent) in registration order
_recording = False


@functools.lru_cache(maxsize=None)
def _installed_folders():
    paths = sysconfig.get_paths()
    folders = {paths.get(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        folders.update(site.getsitepackages())
        folders.add(site.getusersitepackages())
    except AttributeError:  # some virtualenv versions lack them
        pass
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders if f)


def _from_installed_code(filename):
    if filename.startswith("<"):  # frozen modules: the standard library's
        return True
    return os.path.realpath(filename).startswith(_installed_folders())


def register_at_fork(*, before=None, after_in_child=None, after_in_parent=None):
    """os.register_at_fork while a zygote imports: the user's own handlers are recorded."""
    handlers = {"before": before, "after_in_child": after_in_child, "after_in_parent": after_in_parent}
    if not _recording or _from_installed_code(sys._getframe(1).f_code.co_filename):
        # As given: os.register_at_fork refuses an explicit None (threading's passes one hook).
        return _REAL(**{name: h for name, h in handlers.items() if h is not None})
    if all(h is None for h in handlers.values()):
        raise TypeError("At least one argument is required.")
    for name, handler in handlers.items():
        if handler is not None and not callable(handler):
            raise TypeError(f"'{name}' must be callable, not {type(handler).__name__}")
    _DEFERRED.append((before, after_in_child, after_in_parent))
    return None


@contextlib.contextmanager
def recording():
    """While a zygote imports the user's code. Code that kept a reference to the wrapper keeps
    registering for real afterwards."""
    global _recording
    _recording = True
    os.register_at_fork = register_at_fork
    try:
        yield
    finally:
        _recording = False
        os.register_at_fork = _REAL


def register_recorded():
    """In a cell forked from a zygote, before its compile: what its zygote's imports recorded."""
    for before, after_in_child, after_in_parent in _DEFERRED:
        kwargs = {"before": before, "after_in_child": after_in_child, "after_in_parent": after_in_parent}
        _REAL(**{k: v for k, v in kwargs.items() if v is not None})
    _DEFERRED.clear()
