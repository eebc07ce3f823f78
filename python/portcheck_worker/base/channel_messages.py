"""The messages of the fork server's channels, as frozen classes (messages.py says how they are
made and held to the schema): the tool's commands to the server (server_command), the server's to
its zygotes (zygote_command, with what a zygote imports: zygote_spec) and the zygotes' events
(zygote_event). Each is one of several alternatives, a class of its own.
"""
from typing import Literal, Optional, Tuple, Union

from . import protocol
from .frozen_json import convert, frozen
from .messages import KernelRef, ProbeRequest, Target, ZygoteOf, probe_request


@frozen
class RouteExpect:
    """A compile zygote an inspection's cells will want."""
    zygote: Optional[ZygoteOf]
    kernel: KernelRef
    target: Target


@frozen
class ForkRoute:
    """Which zygote forks a cell, without reading its request file (the tool's answer)."""
    kind: str
    zygote: Optional[ZygoteOf]
    kernel: KernelRef
    target: Optional[Target]
    expects: Tuple[RouteExpect, ...] = ()  # absent: an inspection that expects no compile zygote


@frozen
class BatchCell:
    id: int
    max_rss_bytes: int
    request: str
    result: str
    progress: str
    stdout: str
    stderr: str


@frozen
class ForkCommand:
    op: Literal["fork"]
    id: int
    request: str
    result: str
    progress: str
    stdout: str
    stderr: str
    timeout_ms: int
    max_rss_bytes: int
    fresh: bool
    compiles: bool
    route: Optional[ForkRoute]
    batch: Optional[Tuple[BatchCell, ...]] = None
    batch_log: Optional[str] = None


@frozen
class ProbeCommand:
    op: Literal["probe"]
    request: ProbeRequest


@frozen
class WarmCommand:
    op: Literal["warm"]
    targets: Tuple[Target, ...]


@frozen
class QuitCommand:
    op: Literal["quit"]


ServerCommand = Union[ProbeCommand, WarmCommand, ForkCommand, QuitCommand]


@frozen
class ThirdPartyImport:
    """One import statement a package's import begins with (server/import_scan.py): `import
    module`, or `from module import names`."""
    module: str
    names: Tuple[str, ...]


@frozen
class ZygoteSpec:
    """What a zygote imports. `third_party`: only a base has them, and a base is forked by the
    server itself, never sent."""
    role: str
    ref: Optional[KernelRef]
    data_limit: Optional[int]
    target: Optional[Target] = None
    third_party: Tuple[ThirdPartyImport, ...] = ()  # absent: a package zygote's


@frozen
class ZygoteFork:
    id: int
    command: ForkCommand


@frozen
class ZygoteWarm:
    warm: Tuple[Target, ...]


@frozen
class ZygoteSpawn:
    spawn: ZygoteSpec


@frozen
class ZygoteStarted:
    event: Literal["started"]
    pid: int


@frozen
class ZygoteReady:
    event: Literal["ready"]
    driver_free: bool
    threads: int
    seconds: float


@frozen
class ZygoteUnusable:
    event: Literal["unusable"]
    why: str
    seconds: float


@frozen
class ZygoteWarmed:
    event: Literal["warmed"]
    seconds: float


@frozen
class ZygoteForked:
    event: Literal["forked"]
    id: int
    pid: int
    threads: int


@frozen
class ZygoteExited:
    event: Literal["exited"]
    pid: int
    code: Optional[int]
    signal: Optional[int]
    max_rss_bytes: int


ZygoteEvent = Union[ZygoteStarted, ZygoteReady, ZygoteUnusable, ZygoteWarmed, ZygoteForked, ZygoteExited]

# Each message's alternatives, in the order of its "oneOf"; a zygote_command's by the member only
# it has.
MESSAGES = {"server_command": (ProbeCommand, WarmCommand, ForkCommand, QuitCommand),
            "zygote_command": (ZygoteFork, ZygoteWarm, ZygoteSpawn),
            "zygote_event": (ZygoteStarted, ZygoteReady, ZygoteUnusable, ZygoteWarmed, ZygoteForked, ZygoteExited)}
_SERVER_COMMANDS = {"probe": ProbeCommand, "warm": WarmCommand, "fork": ForkCommand, "quit": QuitCommand}
_ZYGOTE_COMMANDS = (("command", ZygoteFork), ("warm", ZygoteWarm), ("spawn", ZygoteSpawn))
_ZYGOTE_EVENTS = {"started": ZygoteStarted, "ready": ZygoteReady, "unusable": ZygoteUnusable,
                  "warmed": ZygoteWarmed, "forked": ZygoteForked, "exited": ZygoteExited}


def server_command(raw):
    """One of the tool's commands. A probe's request is read as the probe alone reads it: a tool
    of another protocol is told that (ProtocolMismatch), not which member differs."""
    if isinstance(raw, dict) and raw.get("op") == "probe":
        return ProbeCommand(op="probe", request=probe_request(raw.get("request")))
    protocol.check("server_command", raw)
    return convert(_SERVER_COMMANDS[raw["op"]], raw)


def zygote_command(raw):
    protocol.check("zygote_command", raw)
    return next(convert(cls, raw) for member, cls in _ZYGOTE_COMMANDS if member in raw)


def zygote_event(raw):
    protocol.check("zygote_event", raw)
    return convert(_ZYGOTE_EVENTS[raw["event"]], raw)


# The readers of the channel's two messages (forking/channel.py reads by these names).
READERS = {"zygote_command": zygote_command, "zygote_event": zygote_event}
