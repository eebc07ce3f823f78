"""`nvidia-smi`, `rocm-smi` and `amd-smi` as a persona run's device would answer them.

`capture --as TARGET` puts a folder first on the command's PATH whose three tools run this file
(`python -I vendor_tools.py TOOL ARGS...`). The persona's own vendor's tools answer the usual
queries with the persona's devices (vendor_devices.py); the other vendor's fail as they do on a
machine without that vendor's driver, so code that picks its vendor by which tool succeeds
(flag_gems) picks the persona's. Settings (`-pm`, `--lock-gpu-clocks`, ...) change nothing and
say so. What is answered is listed in docs/capture.md ("Device personas").
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import vendor_devices  # noqa: E402  (standalone: not imported as a package under python -I)

# --- nvidia-smi --------------------------------------------------------------------------------

# --query-gpu fields: (header unit, value of a device). Units are dropped by `nounits`.
_NVIDIA_FIELDS = {
    "index": ("", lambda d: d.index),
    "name": ("", lambda d: d.name),
    "gpu_name": ("", lambda d: d.name),
    "uuid": ("", lambda d: d.uuid),
    "gpu_uuid": ("", lambda d: d.uuid),
    "serial": ("", lambda d: d.serial[2:]),
    "pci.bus_id": ("", lambda d: d.pci_bus_id),
    "gpu_bus_id": ("", lambda d: d.pci_bus_id),
    "count": ("", lambda d: vendor_devices.device_count()),
    "driver_version": ("", lambda d: vendor_devices.NVIDIA_DRIVER_VERSION),
    "compute_cap": ("", lambda d: d.compute_capability),
    "persistence_mode": ("", lambda d: "Enabled"),
    "pstate": ("", lambda d: "P0"),
    "memory.total": ("MiB", lambda d: d.total_mib),
    "memory.used": ("MiB", lambda d: 0),
    "memory.free": ("MiB", lambda d: d.total_mib),
    "utilization.gpu": ("%", lambda d: 0),
    "utilization.memory": ("%", lambda d: 0),
    "temperature.gpu": ("", lambda d: 35),
    "power.draw": ("W", lambda d: "70.00"),
    "clocks.sm": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.current.sm": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.gr": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.current.graphics": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.mem": ("MHz", lambda d: d.mem_clock_mhz),
    "clocks.current.memory": ("MHz", lambda d: d.mem_clock_mhz),
    "clocks.max.sm": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.max.graphics": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.max.gr": ("MHz", lambda d: d.sm_clock_mhz),
    "clocks.max.memory": ("MHz", lambda d: d.mem_clock_mhz),
    "clocks.max.mem": ("MHz", lambda d: d.mem_clock_mhz),
}

# Options that set something on a real device: accepted (one value each, `-pm 1`), nothing done.
_NVIDIA_SETTINGS = {"-pm", "--persistence-mode", "-lgc", "--lock-gpu-clocks", "-lmc",
                    "--lock-memory-clocks", "-pl", "--power-limit", "-ac", "--applications-clocks",
                    "-c", "--compute-mode", "-e", "--ecc-config"}
_NVIDIA_RESETS = {"-rgc", "--reset-gpu-clocks", "-rmc", "--reset-memory-clocks", "-rac",
                  "--reset-applications-clocks"}


def _nvidia_arguments(args):
    """Splits nvidia-smi's arguments into a dict of options (`-i 0`, `--id=0`, flags)."""
    options, i = {}, 0
    while i < len(args):
        arg = args[i]
        key, has_value, value = arg.partition("=")
        if not has_value and key in {"-i", "--id", "-f", "--filename"} | _NVIDIA_SETTINGS and i + 1 < len(args):
            value, has_value = args[i + 1], True
            i += 1
        options[key] = value if has_value else True
        i += 1
    return options


def _selected(devices, options):
    wanted = options.get("-i", options.get("--id"))
    if wanted is None:
        return devices
    chosen = [d for d in devices if str(wanted) in (str(d.index), d.uuid, d.pci_bus_id)]
    if not chosen:
        raise _ToolError("No devices were found\n", 6)
    return chosen


def _nvidia_query(devices, fields_text, format_text):
    fields = [f.strip() for f in fields_text.split(",") if f.strip()]
    for field in fields:
        if field not in _NVIDIA_FIELDS:
            raise _ToolError(f'Field "{field}" is not a valid field to query.\n', 2)
    formats = set(str(format_text).split(","))
    units = "nounits" not in formats
    lines = []
    if "noheader" not in formats:
        lines.append(", ".join(f + (f" [{_NVIDIA_FIELDS[f][0]}]" if units and _NVIDIA_FIELDS[f][0] else "")
                               for f in fields))
    for device in devices:
        cells = []
        for field in fields:
            unit, value = _NVIDIA_FIELDS[field]
            cells.append(f"{value(device)}" + (f" {unit}" if units and unit else ""))
        lines.append(", ".join(cells))
    return "\n".join(lines) + "\n"


def _nvidia_table(devices):
    rule = "+-----------------------------------------+------------------------+----------------------+"
    width = len(rule) - 2

    def row(text):
        return f"|{text:<{width}}|"
    out = [f"+{'-' * width}+",
           row(f" NVIDIA-SMI {vendor_devices.NVIDIA_DRIVER_VERSION:<21}Driver Version: "
               f"{vendor_devices.NVIDIA_DRIVER_VERSION:<14}CUDA Version: {vendor_devices.NVIDIA_CUDA_VERSION}"),
           rule]
    for d in devices:
        out.append(f"| {d.index:>3}  {d.name[:29]:<29}  On  | {d.pci_bus_id[4:]:>18} Off |"
                   f"                    0 |")
        out.append(f"| N/A   35C    P0             70W /  700W |  {0:>6}MiB / {d.total_mib:>6}MiB |"
                   f"      0%      Default |")
        out.append(rule)
    out.append(row(" Processes: no running processes found"))
    out.append(f"+{'-' * width}+")
    return "\n".join(out) + "\n"


def nvidia_smi(devices, args):
    options = _nvidia_arguments(args)
    if "-h" in options or "--help" in options or "--version" in options:
        return f"NVIDIA System Management Interface -- v{vendor_devices.NVIDIA_DRIVER_VERSION}\n"
    if "-L" in options or "--list-gpus" in options:
        return "".join(f"GPU {d.index}: {d.name} (UUID: {d.uuid})\n" for d in _selected(devices, options))
    if "--query-gpu" in options:
        return _nvidia_query(_selected(devices, options), options["--query-gpu"],
                             options.get("--format", "csv"))
    other_query = next((k for k in options if k.startswith("--query-")), None)
    if other_query is not None:  # --query-compute-apps=pid,...: no process runs on a persona
        header = str(options[other_query]).replace(",", ", ") + "\n"
        return "" if "noheader" in str(options.get("--format", "")) else header
    if _NVIDIA_SETTINGS & options.keys() or _NVIDIA_RESETS & options.keys():
        return ("Not applied: this device is a persona of `triton-portcheck capture --as`.\n"
                "All done.\n")
    if "-q" in options or "--query" in options:
        return "".join(f"GPU {d.pci_bus_id}\n    Product Name : {d.name}\n    GPU UUID : {d.uuid}\n"
                       f"    FB Memory Usage\n        Total : {d.total_mib} MiB\n" for d in _selected(devices, options))
    if options:
        raise _ToolError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", 2)
    return _nvidia_table(devices)


# --- rocm-smi ----------------------------------------------------------------------------------

# rocm-smi's --show* options: (section of --json, lines of one device as (label, value)).
_ROCM_SHOW = {
    "--showproductname": lambda d: [("Card Series", d.name), ("Card Model", "0x74a1"),
                                    ("Card Vendor", "Advanced Micro Devices, Inc. [AMD/ATI]"),
                                    ("Card SKU", "M3000100"), ("Subsystem ID", "0x74a1"),
                                    ("Device Rev", "0x00"), ("Node ID", str(2 + d.index)),
                                    ("GUID", str(1000 + d.index)), ("GFX Version", d.gfx_version)],
    "--showid": lambda d: [("Device Name", d.name), ("Device ID", "0x74a1"), ("Device Rev", "0x00"),
                           ("Subsystem ID", "0x74a1"), ("GUID", str(1000 + d.index))],
    "--showuniqueid": lambda d: [("Unique ID", d.serial)],
    "--showbus": lambda d: [("PCI Bus", d.pci_bus_id[4:])],
    "--showmeminfo": lambda d: [("VRAM Total Memory (B)", str(d.total_mib << 20)),
                                ("VRAM Total Used Memory (B)", "0")],
    "--showuse": lambda d: [("GPU use (%)", "0")],
    "--showmemuse": lambda d: [("GPU Memory Allocated (VRAM%)", "0")],
    "--showtemp": lambda d: [("Temperature (Sensor junction) (C)", "35.0")],
    "--showpower": lambda d: [("Current Socket Graphics Package Power (W)", "140.0")],
    "--showclocks": lambda d: [("sclk clock level", f"1: ({d.sm_clock_mhz}Mhz)"),
                               ("mclk clock level", f"0: ({d.mem_clock_mhz}Mhz)")],
    "--showdriverversion": lambda d: [("Driver version", vendor_devices.AMDGPU_DRIVER_VERSION)],
}
_ROCM_ALIASES = {"-i": "--showid", "-u": "--showuse", "-t": "--showtemp", "-P": "--showpower",
                 "-c": "--showclocks", "--showallinfo": None, "-a": None}


def _rocm_lines(devices, shows, as_json):
    if as_json:
        cards = {f"card{d.index}": {label: value for show in shows for label, value in _ROCM_SHOW[show](d)}
                 for d in devices}
        return json.dumps(cards) + "\n"
    title = "ROCm System Management Interface"
    out = [f"{'=' * 24} {title} {'=' * 24}"]
    for show in shows:
        for d in devices:
            out += [f"GPU[{d.index}]\t\t: {label}: \t{value}" for label, value in _ROCM_SHOW[show](d)]
    out.append(f"{'=' * 30} End of ROCm SMI Log {'=' * 30}")
    return "\n".join(out) + "\n"


def rocm_smi(devices, args):
    shows, as_json = [], False
    for arg in args:
        if arg in ("-h", "--help", "--version", "-V"):
            return f"ROCM-SMI version: 3.0.0+persona\nROCM-SMI-LIB version: {vendor_devices.ROCM_VERSION}\n"
        if arg in ("--json", "-j"):
            as_json = True
        elif arg in _ROCM_ALIASES:
            shows += [_ROCM_ALIASES[arg]] if _ROCM_ALIASES[arg] else list(_ROCM_SHOW)
        elif arg in _ROCM_SHOW:
            shows.append(arg)
        elif arg in ("vram", "vis_vram", "gtt", "all", "--alldevices") or arg.isdigit() or arg in ("-d", "--device"):
            continue
        else:
            raise _ToolError(f"rocm-smi: error: unrecognized arguments: {arg}\n", 2)
    if not shows:
        return _rocm_summary(devices, as_json)
    return _rocm_lines(devices, shows, as_json)


def _rocm_summary(devices, as_json):
    if as_json:
        return _rocm_lines(devices, ["--showproductname", "--showuse", "--showtemp"], True)
    out = [f"{'=' * 24} ROCm System Management Interface {'=' * 24}",
           f"{'=' * 34} Concise Info {'=' * 34}",
           "Device  Node  IDs              Temp    Power   Partitions          SCLK    MCLK    "
           "Fan  Perf  PwrCap  VRAM%  GPU%"]
    for d in devices:
        out.append(f"{d.index:<7} {2 + d.index:<5} 0x74a1,   {1000 + d.index:<5}  35.0C   140.0W  "
                   f"NPS1, SPX, 0        {d.sm_clock_mhz}Mhz {d.mem_clock_mhz}Mhz 0%   auto  750.0W  "
                   f"0%     0%")
    out.append(f"{'=' * 30} End of ROCm SMI Log {'=' * 30}")
    return "\n".join(out) + "\n"


# --- amd-smi -----------------------------------------------------------------------------------

def _amd_static(d):
    return {"asic": {"market_name": d.name, "vendor_id": "0x1002",
                     "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]", "device_id": "0x74a1",
                     "rev_id": "0x00", "asic_serial": d.serial,
                     "num_compute_units": d.multi_processor_count,
                     "target_graphics_version": d.gfx_version},
            "vram": {"type": "HBM", "vendor": "N/A", "size": {"value": d.total_mib, "unit": "MB"}},
            "driver": {"name": "amdgpu", "version": vendor_devices.AMDGPU_DRIVER_VERSION}}


_AMD_COMMANDS = {
    "list": lambda d: {"bdf": d.pci_bus_id[4:].lower(), "uuid": d.uuid[4:], "kfd_id": 1000 + d.index,
                       "node_id": 2 + d.index, "partition_id": 0},
    "static": _amd_static,
    "metric": lambda d: {"usage": {"gfx_activity": {"value": 0, "unit": "%"},
                                   "umc_activity": {"value": 0, "unit": "%"}},
                         "power": {"socket_power": {"value": 140, "unit": "W"}},
                         "clock": {"gfx_0": {"clk": {"value": d.sm_clock_mhz, "unit": "MHz"}}},
                         "temperature": {"hotspot": {"value": 35, "unit": "C"}},
                         "mem_usage": {"total_vram": {"value": d.total_mib, "unit": "MB"},
                                       "used_vram": {"value": 0, "unit": "MB"}}},
}


def _amd_text(value, depth):
    if not isinstance(value, dict):
        return f" {value}"
    if set(value) == {"value", "unit"}:
        return f" {value['value']} {value['unit']}"
    return "".join(f"\n{'    ' * depth}{key.upper()}:{_amd_text(inner, depth + 1)}" for key, inner in value.items())


def amd_smi(devices, args):
    command = args[0] if args else "--help"
    if command in ("version", "--version"):
        return f"AMDSMI Tool: 26.0.0+persona | ROCm version: {vendor_devices.ROCM_VERSION[:3]}\n"
    if command in ("-h", "--help"):
        return "usage: amd-smi [-h] {version,list,static,metric} ...\n"
    if command not in _AMD_COMMANDS:
        raise _ToolError(f"amd-smi: error: argument : invalid choice: '{command}'\n", 2)
    rest = args[1:]
    wanted = rest[rest.index("-g") + 1] if "-g" in rest[:-1] else None
    chosen = [d for d in devices if wanted is None or str(d.index) == wanted]
    answers = [{"gpu": d.index, **_AMD_COMMANDS[command](d)} for d in chosen]
    if "--json" in rest:
        return json.dumps(answers) + "\n"
    return "".join(f"GPU: {a['gpu']}{_amd_text({k: v for k, v in a.items() if k != 'gpu'}, 1)}\n\n"
                   for a in answers)


# --- the other vendor's tools: this run has no such device -------------------------------------

_ABSENT = {
    "nvidia-smi": ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                   "Make sure that the latest NVIDIA driver is installed and running.\n", 9),
    "rocm-smi": ("ERROR:root:Driver not initialized (amdgpu not found in modules)\n", 1),
    "amd-smi": ("AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded (amdgpu not found in modules)\n", 1),
}
_TOOLS = {"nvidia-smi": ("cuda", nvidia_smi), "rocm-smi": ("hip", rocm_smi), "amd-smi": ("hip", amd_smi)}


class _ToolError(Exception):

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status


def main(argv):
    tool, args = argv[1], argv[2:]
    devices = vendor_devices.persona_devices()
    backend, answer = _TOOLS[tool]
    if devices is None or devices[0].backend != backend:
        message, status = _ABSENT[tool]
        device = f"as {devices[0].target}" if devices else "outside a persona run"
        sys.stderr.write(f"{message}(triton-portcheck capture: this run has no such device: {device})\n")
        return status
    try:
        sys.stdout.write(answer(devices, args))
    except _ToolError as e:
        sys.stdout.write(e.message)
        return e.status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
