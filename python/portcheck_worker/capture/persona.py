"""A device persona for `capture --as TARGET`: host code that asks what it runs on is told TARGET.

Libraries choose launch options in Python before they launch, by vendor and by device
(`num_warps = 32 if not is_hip() else 16`; flag_gems loads a vendor's config tables). A capture
on one machine sees one device, so every target's rows would carry that device's choices. In a
persona run the answers host code gets are those of one representative device of the target
(data/device-personas.toml, passed as JSON in $PORTCHECK_CAPTURE_PERSONA):

- Triton: `triton.runtime.driver.active` is a stand-in driver reporting the target (its warp size
  included), so `get_current_target()`, Triton's `is_hip()`/`is_cuda()` helpers and
  `driver.active.utils.get_device_properties()` answer as that device; `get_active_torch_device()`
  is the CPU, where the tensors of a run without a GPU live.
- torch: `torch.version.hip`/`torch.version.cuda`, `torch.cuda.get_device_capability`,
  `get_device_properties`, `get_device_name` and `current_device`. `is_available()` and
  `device_count()` stay torch's own (0 without a GPU): torch must not believe it can allocate on
  a GPU that is not there.
- the vendor's management interfaces: `pynvml` or `amdsmi` (vendor_libraries.py), and
  `nvidia-smi` / `rocm-smi` / `amd-smi` on PATH (vendor_tools.py, put there by the C++ side).

Only the capture's CPU modes use a persona; a live capture answers as the real device.
"""
from . import vendor_devices, vendor_libraries
from ..base import capture_messages
from ..compile.driver import StandInDriver, refusal

ENV_PERSONA = vendor_devices.ENV_PERSONA

# torch.version.cuda under an NVIDIA persona when the installed torch is a CPU build (None).
_CUDA_VERSION = "12.8"


def from_environment():
    """The persona of this run, or None (live capture, or a run not started by capture). The
    device is checked against the protocol and read here, where it enters the user's process."""
    device = vendor_devices.persona_device()
    if device is None:
        return None
    return Persona(capture_messages.capture_persona(device))


class Persona:

    def __init__(self, device):
        self.device = device  # a capture_messages.CapturePersona
        self.name = device.target
        self.backend = device.backend

    def target(self):
        from triton.backends.compiler import GPUTarget
        arch = self.device.arch
        return GPUTarget(self.backend, int(arch) if self.backend == "cuda" else arch,
                         int(self.device.warp_size))

    def driver(self):
        return PersonaDriver(self)

    def capability(self):
        major, minor = self.device.capability
        return int(major), int(minor)

    def triton_properties(self):
        """What Triton's `driver.active.utils.get_device_properties(i)` returns on this device."""
        d = self.device
        properties = {
            "max_shared_mem": d.shared_memory_per_block_optin,
            "max_num_regs": d.regs_per_multiprocessor,
            "multiprocessor_count": d.multi_processor_count,
            "warpSize": d.warp_size,
            "sm_clock_rate": d.sm_clock_rate,
            "mem_clock_rate": d.mem_clock_rate,
            "mem_bus_width": d.mem_bus_width,
        }
        if self.backend == "hip":
            properties["arch"] = d.gcnArchName
            properties["max_threads_per_sm"] = d.max_threads_per_multi_processor
        return properties

    def torch_properties(self):
        """What `torch.cuda.get_device_properties()` returns on this device."""
        d = self.device
        major, minor = self.capability()
        return _DeviceProperties(
            name=d.name, major=major, minor=minor, total_memory=d.total_memory,
            multi_processor_count=d.multi_processor_count, is_integrated=d.is_integrated,
            is_multi_gpu_board=False, max_threads_per_multi_processor=d.max_threads_per_multi_processor,
            gcnArchName=self.gcn_arch_name(), warp_size=d.warp_size,
            regs_per_multiprocessor=d.regs_per_multiprocessor,
            shared_memory_per_block=d.shared_memory_per_block,
            shared_memory_per_block_optin=d.shared_memory_per_block_optin,
            shared_memory_per_multiprocessor=d.shared_memory_per_multiprocessor,
            L2_cache_size=d.L2_cache_size)

    def gcn_arch_name(self):
        """torch's gcnArchName: an AMD device's own; what torch says on an NVIDIA device without one."""
        if self.device.gcnArchName is not None:
            return self.device.gcnArchName
        return "NVIDIA CUDA GPU" if self.backend == "cuda" else ""

    def patch_torch(self, torch):
        cuda = torch.cuda
        properties = self.torch_properties()
        capability = self.capability()
        cuda.get_device_properties = lambda device=None: properties
        cuda.get_device_capability = lambda device=None: capability
        cuda.get_device_name = lambda device=None: properties.name
        cuda.current_device = lambda: 0
        vendor_libraries.install(self.backend, cuda)
        if vendor_devices.physical_gpu_count() == 0:
            # The management stand-ins list the persona's device; torch's ROCm branch would
            # count it (through amdsmi) on a machine where nothing can be allocated.
            cuda.device_count = lambda: 0
        if self.backend == "hip":
            torch.version.hip = vendor_devices.ROCM_VERSION
            torch.version.cuda = None
        else:
            torch.version.hip = None
            torch.version.cuda = torch.version.cuda or _CUDA_VERSION


class _DeviceProperties:
    """Reads like torch's _CudaDeviceProperties: attributes, and its repr."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"_CudaDeviceProperties({shown})"


class _Utils:
    """`driver.active.utils` of a persona: device properties, nothing that loads or launches."""

    def __init__(self, persona):
        self._persona = persona

    def get_device_properties(self, device=None):
        return dict(self._persona.triton_properties())

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise refusal(f"driver.active.utils.{name} needs a real device (capture --as "
                       f"{self._persona.name} only answers what host code asks before a launch)")


class PersonaDriver(StandInDriver):
    """The active driver of a persona run: the stand-in's answers, as the persona's device."""

    def __init__(self, persona):
        super().__init__(persona.target())
        self._persona = persona
        self.utils = _Utils(persona)

    def get_device_capability(self, device=None):
        return self._persona.capability()

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")
