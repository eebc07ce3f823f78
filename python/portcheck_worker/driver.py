"""A stand-in for Triton's active GPU driver, reporting the target of the cell being compiled.

`triton.language.target_info` guards (is_hip, is_cuda, cuda_capability_geq, ...) and parts of the
frontend ask `triton.runtime.driver.active`, not the compile target. Without a GPU they would see no
target, and `if is_hip(): ... else: ...` would compile the wrong branch for every hip cell.
"""


class StandInDriverError(RuntimeError):
    pass


class StandInDriver:
    """Answers what compilation asks of a driver; anything that needs a real device raises."""

    def __init__(self, target):
        self._target = target

    @classmethod
    def is_active(cls):
        return True

    def get_current_target(self):
        return self._target

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_active_torch_device(self):
        raise StandInDriverError("this cell is compiled without a GPU: there is no torch device")

    def get_device_capability(self, device=None):
        if self._target.backend == "cuda":
            return divmod(int(self._target.arch), 10)
        raise StandInDriverError("get_device_capability() is a CUDA query")

    def map_python_to_cpp_type(self, ty):
        raise StandInDriverError("map_python_to_cpp_type: launchers are not built when only compiling")

    def get_benchmarker(self):
        raise StandInDriverError("benchmarking needs a GPU")

    def __getattr__(self, name):
        # Named in the error so a new Triton that asks the driver for more is easy to diagnose.
        raise StandInDriverError(
            f"the compile asked the GPU driver for '{name}', which a compile-only run cannot answer")


def install(target):
    from triton.runtime import driver
    driver.set_active(StandInDriver(target))


def uninstall():
    """Back to no active driver, so module-level driver queries fail as they would without a GPU
    rather than seeing whichever target was compiled last."""
    from triton.runtime import driver
    driver._active = None
