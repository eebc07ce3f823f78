"""The capture persona (`capture --as`), as a frozen class (messages.py says how such classes are
made and held to the schema): read where it enters the user's process, by the capture hook. A
module of its own because the hook is imported by every Python process of the user's command:
those pay for this one class, not for every request's.
"""
from typing import Optional, Tuple

from . import protocol
from .frozen_json import convert, frozen


@frozen
class CapturePersona:
    """One device of a target, as `capture --as` answers for it (data/device-personas.toml)."""
    target: str
    backend: str
    arch: str
    warp_size: int
    capability: Tuple[int, ...]
    name: str
    multi_processor_count: int
    total_memory: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_multiprocessor: int
    max_threads_per_multi_processor: int
    L2_cache_size: int
    regs_per_multiprocessor: int
    is_integrated: bool
    sm_clock_rate: int
    mem_clock_rate: int
    mem_bus_width: int
    gcnArchName: Optional[str] = None  # an AMD device's; persona.py says what stands for it elsewhere


MESSAGES = {"capture_persona": CapturePersona}


def capture_persona(raw):
    """The persona's device, checked (ProtocolError naming the member that breaks it) and read."""
    protocol.check("capture_persona", raw)
    return convert(CapturePersona, raw)
