"""The devices a persona run's management tools and libraries report (`capture --as`).

Host code asks a vendor's management interface what it runs on: flag_gems picks its vendor by
which of `nvidia-smi` / `rocm-smi` succeeds, torch's `torch.cuda.utilization()` and friends go
through pynvml or amdsmi, `triton.testing.nvsmi` parses `nvidia-smi --query-gpu`. In a persona run
every one of them describes the persona's device, one for each GPU of the machine (one where it
has none: the device the run is *as*; one under `--fake-gpu`, as torch is told). torch's own
runtime count is the exception: without a GPU it stays 0 (persona.py), so nothing is allocated
on a device that is not there.

Standard library only: the tools' script (vendor_tools.py) runs this under `python -I`.
"""
import functools
import glob
import hashlib
import json
import os

ENV_PERSONA = "PORTCHECK_CAPTURE_PERSONA"
ENV_FAKE_GPU = "PORTCHECK_CAPTURE_FAKE_GPU"

# What the persona's software stack reports as its versions: a driver of the CUDA 13.0 era and
# ROCm 6.4, a release Triton's AMD backend supports (torch.version.hip under an AMD persona too:
# code compares it as a version or tests it against None).
NVIDIA_DRIVER_VERSION = "580.65.06"
NVIDIA_CUDA_VERSION = "13.0"
ROCM_VERSION = "6.4.43482"
AMDGPU_DRIVER_VERSION = "6.12.12"


@functools.cache
def physical_gpu_count():
    """GPUs the machine has, counted without initialising any runtime (a CUDA runtime started
    in a process that later forks breaks the fork): NVIDIA device nodes and the AMD GPUs of
    the KFD topology (its CPU nodes have no SIMDs)."""
    nvidia = [p for p in glob.glob("/dev/nvidia*") if os.path.basename(p)[6:].isdigit()]
    amd = 0
    for properties in glob.glob("/sys/class/kfd/kfd/topology/nodes/*/properties"):
        try:
            with open(properties, encoding="ascii", errors="replace") as f:
                amd += any(line.split()[:1] == ["simd_count"] and line.split()[1] != "0" for line in f)
        except (OSError, IndexError):
            continue
    return len(nvidia) + amd


def device_count():
    if os.environ.get(ENV_FAKE_GPU) == "1":
        return 1
    return max(1, physical_gpu_count())


class Device:
    """One persona device, index `index`, with every figure the tools and libraries report.

    The persona (capture_persona) is read by name here, once, and not through base/messages.py:
    the tools' script runs this file alone, with the standard library only. The hook has read it
    through messages.py first, checking it (persona.from_environment)."""

    def __init__(self, persona, index):
        self.index = index
        self.target = persona["target"]
        self.backend = persona["backend"]
        self.name = persona["name"]
        self.total_mib = int(persona["total_memory"]) // (1 << 20)
        self.sm_clock_mhz = int(persona["sm_clock_rate"]) // 1000
        self.mem_clock_mhz = int(persona["mem_clock_rate"]) // 1000
        self.multi_processor_count = int(persona["multi_processor_count"])
        self.capability = tuple(int(x) for x in persona["capability"])
        self.gcn_arch_name = persona.get("gcnArchName", "")
        self.pci_bus_id = f"00000000:{0x18 + 0x10 * index:02X}:00.0"
        seed = hashlib.sha1(f"{persona['target']}/{index}".encode()).hexdigest()
        self.uuid = f"GPU-{seed[:8]}-{seed[8:12]}-{seed[12:16]}-{seed[16:20]}-{seed[20:32]}"
        self.serial = "0x" + seed[:16].upper()

    @property
    def compute_capability(self):
        major, minor = self.capability
        return f"{major}.{minor}"

    @property
    def gfx_version(self):
        return self.gcn_arch_name.split(":")[0]


@functools.cache
def persona_device():
    """The device of this persona run (capture_persona in protocol.schema.json), or None outside
    one: the one reader of $PORTCHECK_CAPTURE_PERSONA, read once (the stand-in libraries ask on
    every call). The hook checks it against the schema where it enters the user's process
    (persona.from_environment); the tools' standalone script reads it here too."""
    text = os.environ.get(ENV_PERSONA)
    return json.loads(text) if text else None


@functools.cache
def persona_devices():
    """The persona's devices, or None outside a persona run."""
    persona = persona_device()
    if persona is None:
        return None
    return [Device(persona, i) for i in range(device_count())]
