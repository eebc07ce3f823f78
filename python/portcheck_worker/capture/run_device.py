"""The device a capture run records as: a persona (`--as`, and the default one of the CPU modes)
or, in live mode, the real device; and whether torch is given a fake one (`--fake-gpu`).
"""
import os

from . import persona as persona_module
from ..compile.driver import StandInDriver
from .vendor_devices import ENV_FAKE_GPU

# The stand-in target when no persona was passed (a hook of a newer worker under an older tool):
# the default persona's. Every NVIDIA arch shares its specialisation rules (BaseBackend:
# divisibility by 16 of pointers and ints).
_STAND_IN_TARGET = ("cuda", 90, 32)


class RunDevice:

    def __init__(self, mode):
        self.persona = persona_module.from_environment() if mode != "live" else None
        self._name = self.persona.name if self.persona is not None else None
        # `capture --fake-gpu` (record mode): torch believes in the persona's device (fake_gpu.py).
        self.fake_gpu = mode == "record" and self.persona is not None and os.environ.get(ENV_FAKE_GPU) == "1"

    def stand_in_driver(self):
        if self.persona is not None:
            return self.persona.driver()
        from triton.backends.compiler import GPUTarget
        return StandInDriver(GPUTarget(*_STAND_IN_TARGET))

    def name(self):
        """The persona's target, or in live mode the real device's ("cuda:90")."""
        if self._name is None:
            from triton.runtime import driver as driver_config
            target = driver_config.active.get_current_target()
            self._name = f"{target.backend}:{target.arch}"
        return self._name
