"""A stand-in for Triton's active GPU driver, reporting the target of the cell being compiled.

`triton.language.target_info` guards (is_hip, is_cuda, cuda_capability_geq, ...) and parts of the
frontend ask `triton.runtime.driver.active`, not the compile target. Without a GPU they would see no
target, and `if is_hip(): ... else: ...` would compile the wrong branch for every hip cell.
"""


import os
import sys

from . import portable


class _Unanswerable(AttributeError):
    """An AttributeError, so that Triton's static walks (`getattr(obj, attr, None)` over every
    attribute a kernel's helpers mention, to key its cache) see "no such attribute" and go on;
    anything else ended the compile before a single line of the kernel ran."""


class StandInDriverError(_Unanswerable):
    """Triton itself asked the stand-in what it cannot answer: our gap, an internal error."""


class GpuQueryInUserCode(_Unanswerable):
    """The kernel's own code asked the GPU driver a question while being compiled: the cell's
    failure (no GPU answers in a compile-only run), never reported as a bug of ours."""


def refusal(message):
    """The error for a question the stand-in cannot answer, classed by who asked: the first
    frame outside this file and Triton's driver proxy (triton/runtime/driver.py, which forwards
    `driver.active.X`) is Triton's (or the worker's, a persona's included) or the user's."""
    import triton
    triton_dir = os.path.dirname(os.path.abspath(triton.__file__))
    ours = (triton_dir, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the worker
    relays = (os.path.abspath(__file__), os.path.join(triton_dir, "runtime", "driver.py"))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in relays:
        frame = frame.f_back
    if frame is None or os.path.abspath(frame.f_code.co_filename).startswith(ours):
        return StandInDriverError(message)
    where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
    return GpuQueryInUserCode(f"the kernel's code at {where} asked the GPU driver during the compile: {message}")


class StandInDriver(portable.StandInDriver):
    """Answers what compilation asks of a driver (portable's answers, which a reproducer carries);
    anything that needs a real device raises, classed by who asked (refusal)."""

    def get_active_torch_device(self):
        raise refusal("this cell is compiled without a GPU: there is no torch device")

    def get_device_capability(self, device=None):
        if self.target.backend == "cuda":
            return divmod(int(self.target.arch), 10)
        raise refusal("get_device_capability() is a CUDA query")

    def map_python_to_cpp_type(self, ty):
        raise refusal("map_python_to_cpp_type: launchers are not built when only compiling")

    def get_benchmarker(self):
        """A benchmarker that refuses when it is run: Triton before 3.4 asks for it when
        @triton.autotune decorates a kernel (Autotuner.__init__), at the module's import."""

        def benchmark(*args, **kwargs):
            raise refusal("benchmarking needs a GPU")

        return benchmark

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            # A protocol probe (hasattr(x, "__triton_aggregate__"), copy, pickle): "not here",
            # as for any object; raising anything else breaks the caller, not a GPU query.
            raise AttributeError(name)
        # Named in the error so a new Triton that asks the driver for more is easy to diagnose.
        raise refusal(f"the GPU driver was asked for '{name}', which a compile-only run cannot answer")


def install(target):
    from triton.runtime import driver
    driver.set_active(StandInDriver(target))


def uninstall():
    """Back to no active driver, so module-level driver queries fail as they would without a GPU
    rather than seeing whichever target was compiled last."""
    from triton.runtime import driver
    driver._active = None


class DriverWatch:
    """Notes whether an import asks Triton's driver anything (`driver.active`, `.default`, or sets
    it), the only thing a compile-only import sees differ from one target to the next: the
    stand-in driver reports the cell's target. An import that never asks is the same for every
    target, so the inspection's zygote can fork every target's cells of that package (one import
    per package instead of one per package and target), and its cache keys are every target's. Swaps the class of Triton's DriverConfig
    object for a subclass for the import's duration; each call still does what it did."""

    def __init__(self):
        from triton.runtime import driver as config
        base = type(config)
        asked = []

        def noting(name):
            def call(this, *args):
                asked.append(name)
                original = getattr(base, name)
                return original.fget(this) if isinstance(original, property) else original(this, *args)
            return property(call) if isinstance(getattr(base, name), property) else call

        self._config, self._base, self._asked = config, base, asked
        members = {name: noting(name) for name in ("active", "default", "set_active", "reset_active")
                   if hasattr(base, name)}
        config.__class__ = type("WatchedDriverConfig", (base, ), members)

    def asked(self):
        return bool(self._asked)

    def stop(self):
        self._config.__class__ = self._base
