"""Launches a module makes at its top level, while it is imported for a cell.

A one-file experiment or benchmark script builds its tensors and launches its kernel at module
level (`add_kernel[grid](x, y, out, n, BLOCK=1024)` and a print of the result). `capture` runs
the script and records that launch. `check`, `export` and `repro` then import the script to find
the kernel, and the import would launch it again. That launch compiles nothing a cell needs (the
cell compiles its own specialisation) and, on a machine without the GPU, can only fail: Triton's
launcher under the stand-in driver, or torch asked for a device there is none of.

So while the module is imported for a cell, a Triton kernel's launch (`JITFunction.run`, and the
autotuner's and heuristics' `run`, which would benchmark on the device) does nothing and returns
None; the launches skipped are remembered (kernel and line) for an import that fails anyway.
Nothing else of the module changes: it runs as written, and a launch made later, by the cell's
own code, is Triton's again.
"""
import contextlib
import os
import sys

_skipped = []  # (kernel name, "file:line") of the launches skipped, first ones first


def _caller_line():
    """The user's line that made the launch: the first frame outside Triton and this package."""
    frame = sys._getframe(2)
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while frame is not None:
        name = frame.f_code.co_filename
        if "/triton/" not in name and not os.path.abspath(name).startswith(ours):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _skipped_launch(self, *args, **kwargs):
    """Stands in for a kernel's run() during the import."""
    if len(_skipped) < 8:
        name = getattr(getattr(self, "fn", None), "__name__", None) or getattr(self, "__name__", "?")
        _skipped.append((name, _caller_line()))
    return None


def _launchers():
    """Triton's classes whose run() launches a kernel, where this Triton has them."""
    from triton.runtime import autotuner
    from triton.runtime.jit import JITFunction
    classes = [JITFunction]
    classes += [getattr(autotuner, n) for n in ("Autotuner", "Heuristics") if hasattr(autotuner, n)]
    return [cls for cls in classes if "run" in cls.__dict__]


@contextlib.contextmanager
def skipped():
    """While the module is imported: its launches do nothing (see the module's docstring)."""
    launchers = _launchers()
    originals = {cls: cls.__dict__["run"] for cls in launchers}
    for cls in launchers:
        cls.run = _skipped_launch
    try:
        yield
    finally:
        for cls, run in originals.items():
            cls.run = run


def what_the_import_did():
    """A clause for an import's error: the launches it made (and which were skipped), if any."""
    if not _skipped:
        return ""
    made = ", ".join(f"{name} at {line}" for name, line in _skipped[:3])
    return f"; its top level launched {made} (launches at import are skipped here)"


MAIN_GUARD_HINT = ("the module's top level runs whenever triton-portcheck imports it to find the "
                   "kernel: put what a script does when run (tensors on the GPU, launches, prints) "
                   "under `if __name__ == \"__main__\":`")
