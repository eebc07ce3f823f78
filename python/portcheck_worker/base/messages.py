"""The messages the worker reads, as frozen classes: each is checked against
../protocol.schema.json (protocol.check, the checker both sides share) and converted once, where
it enters (`read` and the entry points below), and read by attribute everywhere after. Nothing
else in the worker indexes a message it reads by key; the user's own pass-throughs
(`constants`, `options`, `specialization`) and the maps keyed by the user's names (`signature`,
a launch's `needs`) stay dicts.

A class has a member per property of its definition, under the same name (`pass` is `pass_`);
one the schema requires has no default, an optional one is None when absent unless its default
says otherwise. tests/integration/test_worker_messages.py holds each class to its definition,
both ways, so a member added to the schema fails until it is here too.

The classes of the fork server's channels (server_command, zygote_command, zygote_event) are
in channel_messages.py, the capture persona's in capture_messages.py.
"""
from typing import Dict, Literal, Optional, Tuple, Union

from . import protocol
from .frozen_json import convert, frozen


@frozen
class Target:
    backend: str
    arch: str
    warp_size: int


@frozen
class KernelRef:
    function: str
    import_root: str
    file: Optional[str] = None
    module: Optional[str] = None
    pythonpath: Optional[Tuple[str, ...]] = None


@frozen
class ZygoteOf:
    """The zygotes a request can be forked from (src/check/zygote_key.cpp decides)."""
    key: str
    any_target: str


@frozen
class LaunchLimits:
    max_threads_per_block: Optional[int] = None
    max_shared_bytes_per_block: Optional[int] = None
    max_registers_per_block: Optional[int] = None
    max_registers_per_thread: Optional[int] = None
    register_allocation_unit: Optional[int] = None
    max_cluster_size: Optional[int] = None
    max_tensor_memory_columns: Optional[int] = None
    source: Optional[str] = None


@frozen
class ProbeRequest:
    protocol: int
    targets: Tuple[Target, ...]
    predict: Optional[bool] = None
    tool_version: Optional[str] = None


@frozen
class _CellOfARow:
    """The members a compile request and a repro request share: one manifest row on one target.
    The schema defines them in each (compile_request, repro_request); each class is held to its
    own definition (test_worker_messages.py)."""
    zygote: Optional[ZygoteOf]
    kernel: KernelRef
    row_name: str
    signature: Dict[str, str]
    constants: dict
    options: dict
    target: Target


@frozen
class CompileRequest(_CellOfARow):
    kind: Literal["compile"]
    specialization: Optional[dict] = None
    save_ir_dir: Optional[str] = None
    export_dir: Optional[str] = None
    launch_limits: Optional[LaunchLimits] = None


@frozen
class ReproLaunch:
    """What the failing cell's launch needed, against which limits, and what they refused."""
    needs: Dict[str, int]
    limits: LaunchLimits
    problems: Tuple[str, ...]


@frozen
class ReproFacts:
    """What the tool knows of the failing cell a reproducer is written for."""
    kernel: str
    target: str
    kind: str
    stage: str
    pass_: str
    fingerprint: str
    message: str
    tool: str
    command: str
    launch: Optional[ReproLaunch]
    shrink_s: float
    time_limit_s: Optional[float] = None
    max_rss_bytes: Optional[int] = None


@frozen
class ReproRequest(_CellOfARow):
    kind: Literal["repro"]
    repro: ReproFacts
    specialization: Optional[dict] = None


@frozen
class InspectKernel:
    id: str
    kernel: KernelRef


@frozen
class InspectCell:
    id: int
    request: Union[CompileRequest, ReproRequest]


@frozen
class InspectRequest:
    kind: Literal["inspect"]
    zygote: Optional[ZygoteOf]
    kernels: Tuple[InspectKernel, ...]
    cells: Tuple[InspectCell, ...]
    targets: Tuple[Target, ...]
    keys: bool
    predict: bool
    tool_version: str
    target: Optional[Target] = None


# The messages of this module by their names in the schema; the cell requests by their "kind".
MESSAGES = {"probe_request": ProbeRequest, "compile_request": CompileRequest, "inspect_request": InspectRequest,
            "repro_request": ReproRequest}
CELL_REQUESTS = {"compile": CompileRequest, "inspect": InspectRequest, "repro": ReproRequest}


def read(message_kind, raw):
    """`raw` checked as a `message_kind` (ProtocolError naming the member that breaks it), then
    converted into its class."""
    protocol.check(message_kind, raw)
    return convert(MESSAGES[message_kind], raw)


def probe_request(raw):
    """The tool's probe: a tool of another protocol is told so (ProtocolMismatch) before any member
    is checked, since its probe may differ in any of them."""
    protocol.check_tool_protocol(raw)
    return read("probe_request", raw)


def cell_request(raw):
    """A request run as a cell, whatever its kind (compile, inspect, repro)."""
    kind = raw.get("kind") if isinstance(raw, dict) else None
    if kind not in CELL_REQUESTS:
        raise protocol.ProtocolError(f"protocol error: a cell request of kind {kind!r} "
                                     f"(protocol {protocol.PROTOCOL_VERSION} knows {sorted(CELL_REQUESTS)})")
    return read(f"{kind}_request", raw)

