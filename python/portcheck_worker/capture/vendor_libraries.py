"""`pynvml` and `amdsmi` as a persona run's device would answer them (`capture --as`).

torch's `torch.cuda.device_count()`, `memory_usage()`, `utilization()`, `temperature()`,
`power_draw()`, `clock_rate()` and `device_memory_used()` ask NVML on a CUDA build and amdsmi
when `torch.version.hip` is set, through the module torch imported when it was itself imported.
Under an AMD persona torch takes its ROCm branches on a build that never imported amdsmi
(`NameError: name 'amdsmi' is not defined`), and libraries import either package themselves. The
persona's vendor gets a stand-in module here, answering as the persona's devices
(vendor_devices.py): in `sys.modules` and in torch.cuda's namespace. A call a stand-in does not
know raises the library's own "not supported" error, which callers already handle.
"""
import enum
import sys
import types

from . import vendor_devices


# --- pynvml (nvidia-ml-py) ---------------------------------------------------------------------

class NVMLError(Exception):

    def __init__(self, value, message="Not Supported"):
        super().__init__(message)
        self.value = value


class NVMLError_NotSupported(NVMLError):  # noqa: N801 (pynvml's own names)

    def __init__(self, message="Not Supported"):
        super().__init__(3, message)


class NVMLError_InvalidArgument(NVMLError):  # noqa: N801

    def __init__(self, message="Invalid Argument"):
        super().__init__(2, message)


class NVMLError_DriverNotLoaded(NVMLError):  # noqa: N801

    def __init__(self, message="Driver Not Loaded"):
        super().__init__(9, message)


def _nvml_devices():
    return vendor_devices.persona_devices() or []


def _nvml_handle(index):
    devices = _nvml_devices()
    if not 0 <= int(index) < len(devices):
        raise NVMLError_InvalidArgument()
    return devices[int(index)]


def _nvml_find(attribute, value):
    for device in _nvml_devices():
        if getattr(device, attribute) == value:
            return device
    raise NVMLError_InvalidArgument()


def _memory(device):
    total = device.total_mib << 20
    return types.SimpleNamespace(total=total, free=total, used=0, reserved=0)


def _clock(device, clock_type):
    return device.mem_clock_mhz if clock_type == 2 else device.sm_clock_mhz


_PYNVML_FUNCTIONS = {
    "nvmlInit": lambda: None,
    "nvmlInitWithFlags": lambda flags: None,
    "nvmlShutdown": lambda: None,
    "nvmlSystemGetDriverVersion": lambda: vendor_devices.NVIDIA_DRIVER_VERSION,
    "nvmlSystemGetCudaDriverVersion": lambda: 13000,
    "nvmlSystemGetCudaDriverVersion_v2": lambda: 13000,
    "nvmlSystemGetNVMLVersion": lambda: "13." + vendor_devices.NVIDIA_DRIVER_VERSION,
    "nvmlDeviceGetCount": lambda: len(_nvml_devices()),
    "nvmlDeviceGetHandleByIndex": _nvml_handle,
    "nvmlDeviceGetHandleByUUID": lambda uuid: _nvml_find("uuid", uuid if isinstance(uuid, str) else uuid.decode()),
    "nvmlDeviceGetHandleByPciBusId": lambda bus: _nvml_find("pci_bus_id", bus if isinstance(bus, str) else bus.decode()),
    "nvmlDeviceGetIndex": lambda d: d.index,
    "nvmlDeviceGetName": lambda d: d.name,
    "nvmlDeviceGetUUID": lambda d: d.uuid,
    "nvmlDeviceGetSerial": lambda d: d.serial[2:],
    "nvmlDeviceGetPciInfo": lambda d: types.SimpleNamespace(busId=d.pci_bus_id, busIdLegacy=d.pci_bus_id[4:],
                                                            domain=0, bus=0x18 + 0x10 * d.index, device=0),
    "nvmlDeviceGetMemoryInfo": lambda d, version=None: _memory(d),
    "nvmlDeviceGetUtilizationRates": lambda d: types.SimpleNamespace(gpu=0, memory=0),
    "nvmlDeviceGetTemperature": lambda d, sensor=0: 35,
    "nvmlDeviceGetPowerUsage": lambda d: 70000,
    "nvmlDeviceGetEnforcedPowerLimit": lambda d: 700000,
    "nvmlDeviceGetPowerManagementLimit": lambda d: 700000,
    "nvmlDeviceGetClockInfo": _clock,
    "nvmlDeviceGetMaxClockInfo": _clock,
    "nvmlDeviceGetCudaComputeCapability": lambda d: d.capability,
    "nvmlDeviceGetMultiGpuBoard": lambda d: 0,
    "nvmlDeviceGetComputeRunningProcesses": lambda d: [],
    "nvmlDeviceGetGraphicsRunningProcesses": lambda d: [],
    "nvmlDeviceGetPersistenceMode": lambda d: 1,
    "nvmlDeviceGetNumGpuCores": lambda d: 128 * d.multi_processor_count,
}
_PYNVML_CONSTANTS = {"NVML_TEMPERATURE_GPU": 0, "NVML_CLOCK_GRAPHICS": 0, "NVML_CLOCK_SM": 1,
                     "NVML_CLOCK_MEM": 2, "NVML_CLOCK_VIDEO": 3, "NVML_SUCCESS": 0,
                     "NVML_ERROR_NOT_SUPPORTED": 3, "NVML_ERROR_INVALID_ARGUMENT": 2,
                     "NVML_ERROR_DRIVER_NOT_LOADED": 9}


# --- amdsmi ------------------------------------------------------------------------------------

class AmdSmiException(Exception):

    def __init__(self, err_code=2, message="AMDSMI_STATUS_NOT_SUPPORTED"):
        super().__init__(message)
        self.err_code = err_code


class AmdSmiLibraryException(AmdSmiException):
    pass


class AmdSmiParameterException(AmdSmiException):

    def __init__(self, message="AMDSMI_STATUS_INVAL"):
        super().__init__(1, message)


AmdSmiInitFlags = enum.IntEnum("AmdSmiInitFlags", {"INIT_ALL_PROCESSORS": 0xFFFFFFFF, "INIT_AMD_CPUS": 1,
                                                   "INIT_AMD_GPUS": 2, "INIT_NON_AMD_CPUS": 4,
                                                   "INIT_NON_AMD_GPUS": 8})
AmdSmiTemperatureType = enum.IntEnum("AmdSmiTemperatureType", {"EDGE": 0, "JUNCTION": 1, "HOTSPOT": 1,
                                                               "VRAM": 2, "HBM_0": 3})
AmdSmiTemperatureMetric = enum.IntEnum("AmdSmiTemperatureMetric", {"CURRENT": 0, "MAX": 1, "MIN": 2,
                                                                   "CRITICAL": 4})
AmdSmiClkType = enum.IntEnum("AmdSmiClkType", {"SYS": 0, "GFX": 0, "DF": 1, "DCEF": 2, "SOC": 3,
                                               "MEM": 4, "PCIE": 5})
AmdSmiProcessorType = enum.IntEnum("AmdSmiProcessorType", {"UNKNOWN": 0, "AMD_GPU": 1, "AMD_CPU": 2})


def _amd_clock(device, clock_type):
    mhz = device.mem_clock_mhz if int(clock_type) == AmdSmiClkType.MEM else device.sm_clock_mhz
    return {"clk": mhz, "cur_clk": mhz, "min_clk": 100, "max_clk": mhz, "clk_locked": False,
            "clk_deep_sleep": False}


_AMDSMI_FUNCTIONS = {
    "amdsmi_init": lambda flags=None: None,
    "amdsmi_shut_down": lambda: None,
    "amdsmi_get_processor_handles": lambda: list(vendor_devices.persona_devices() or []),
    "amdsmi_get_processor_type": lambda d: {"processor_type": AmdSmiProcessorType.AMD_GPU.name},
    "amdsmi_get_gpu_asic_info": lambda d: {
        "market_name": d.name, "vendor_id": "0x1002", "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]",
        "subvendor_id": "0x1002", "device_id": "0x74a1", "rev_id": "0x00", "asic_serial": d.serial,
        "oam_id": d.index, "num_of_compute_units": d.multi_processor_count,
        "target_graphics_version": d.gfx_version},
    "amdsmi_get_gpu_board_info": lambda d: {"product_name": d.name, "product_serial": d.serial[2:],
                                            "manufacturer_name": "AMD", "model_number": "102-G30211-0C"},
    "amdsmi_get_gpu_enumeration_info": lambda d: {"drm_render": 128 + d.index, "drm_card": d.index,
                                                  "hsa_id": 2 + d.index, "hip_id": d.index,
                                                  "hip_uuid": d.uuid[4:]},
    "amdsmi_get_gpu_device_uuid": lambda d: d.uuid[4:],
    "amdsmi_get_gpu_device_bdf": lambda d: d.pci_bus_id[4:].lower(),
    "amdsmi_get_gpu_driver_info": lambda d: {"driver_name": "amdgpu",
                                             "driver_version": vendor_devices.AMDGPU_DRIVER_VERSION},
    "amdsmi_get_gpu_vram_usage": lambda d: {"vram_total": d.total_mib, "vram_used": 0},
    "amdsmi_get_gpu_vram_info": lambda d: {"vram_type": "HBM3", "vram_vendor": "N/A", "vram_size": d.total_mib},
    "amdsmi_get_gpu_activity": lambda d: {"gfx_activity": 0, "umc_activity": 0, "mm_activity": 0},
    "amdsmi_get_temp_metric": lambda d, sensor, metric: 35,
    "amdsmi_get_power_info": lambda d: {"average_socket_power": 140, "current_socket_power": 140,
                                        "gfx_voltage": 800, "soc_voltage": 800, "mem_voltage": 800,
                                        "power_limit": 750000000},
    "amdsmi_get_clock_info": _amd_clock,
    "amdsmi_get_gpu_process_list": lambda d: [],
    "amdsmi_get_lib_version": lambda: {"major": 26, "minor": 0, "release": 0, "build": "persona"},
}
_AMDSMI_CONSTANTS = {"AmdSmiInitFlags": AmdSmiInitFlags, "AmdSmiTemperatureType": AmdSmiTemperatureType,
                     "AmdSmiTemperatureMetric": AmdSmiTemperatureMetric, "AmdSmiClkType": AmdSmiClkType,
                     "AmdSmiProcessorType": AmdSmiProcessorType, "AmdSmiException": AmdSmiException,
                     "AmdSmiLibraryException": AmdSmiLibraryException,
                     "AmdSmiParameterException": AmdSmiParameterException}


# --- the modules -------------------------------------------------------------------------------

def _module(name, functions, constants, prefix, unsupported):
    module = types.ModuleType(name, f"{name} as a `triton-portcheck capture --as` persona's device answers it")
    module.__dict__.update(functions)
    module.__dict__.update(constants)
    module.__file__ = __file__
    module.__portcheck_persona__ = True

    def __getattr__(attribute):  # what a stand-in does not know: the library's own refusal
        if attribute.startswith(prefix):
            def not_supported(*args, **kwargs):
                raise unsupported(f"{attribute}: not answered for a persona's device")
            return not_supported
        raise AttributeError(f"module '{name}' has no attribute '{attribute}'")
    module.__getattr__ = __getattr__
    return module


def pynvml():
    errors = {c.__name__: c for c in (NVMLError, NVMLError_NotSupported, NVMLError_InvalidArgument,
                                      NVMLError_DriverNotLoaded)}
    return _module("pynvml", _PYNVML_FUNCTIONS, {**_PYNVML_CONSTANTS, **errors}, "nvml", NVMLError_NotSupported)


def amdsmi():
    return _module("amdsmi", _AMDSMI_FUNCTIONS, _AMDSMI_CONSTANTS, "amdsmi_",
                   lambda message: AmdSmiLibraryException(2, message))


# The management library of each backend, and the flags torch.cuda keeps for it (torch before 2.9
# guards amdsmi with _HAS_PYNVML as well).
_LIBRARIES = {"cuda": ("pynvml", pynvml, ("_HAS_PYNVML",)),
              "hip": ("amdsmi", amdsmi, ("_HAS_AMDSMI", "_HAS_PYNVML"))}


def install(backend, torch_cuda):
    """The persona's vendor library, for `import` and for torch.cuda's own calls."""
    name, make, flags = _LIBRARIES[backend]
    module = make()
    sys.modules[name] = module
    setattr(torch_cuda, name, module)
    for flag in flags:
        if hasattr(torch_cuda, flag):
            setattr(torch_cuda, flag, True)
    _default_to_current_device(torch_cuda)
    return module


def _default_to_current_device(torch_cuda):
    """torch finds the management index of "the current device" through its runtime, which has
    none on a machine without a GPU (`memory_usage()` then fails comparing None with 0); the
    persona's current device is the one `torch.cuda.current_device()` names."""
    for name in ("_get_nvml_device_index", "_get_amdsmi_device_index"):
        original = getattr(torch_cuda, name, None)
        if original is not None:
            setattr(torch_cuda, name, lambda device=None, _original=original: _original(
                torch_cuda.current_device() if device is None else device))
