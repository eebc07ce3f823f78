"""Files exchanged with the C++ supervisor: a request in, a result out, progress marks on the way.

The result is written to a temporary file and renamed, so the supervisor never reads half of one.
Progress marks are appended and flushed before each stage starts, so that when the process dies
of a signal, a timeout or the memory limit, the supervisor still knows which stage was running.

The probe is the handshake: the tool's request carries the protocol it speaks, the answer the
worker's (PROTOCOL_VERSION), and each side refuses the other's when they differ.
"""
import json
import os

from . import PROTOCOL_VERSION

# The tool's exit 3: Triton cannot be imported, or this worker does not speak the tool's protocol.
EXIT_ENVIRONMENT = 3
# Marks the worker of `--isolation process` leaves in the progress file around the life of the
# child that runs the cell (cell_child.py). The supervisor reads them (src/run/cell_parent.cpp):
# a worker that died of a signal after the first and before the second was killed by that child.
MARK_CHILD_FORKED = "cell-parent forked"
MARK_CHILD_ENDED = "cell-parent child-ended"
# Requests from tools that predate the "protocol" field: they spoke the first protocol.
FIRST_PROTOCOL = 1


class ProtocolMismatch(Exception):
    """The tool and this worker come from different installs of triton-portcheck."""


def check_tool_protocol(request):
    """Refuses a request of a tool that speaks another protocol. The message is the one line the
    worker prints (after "portcheck-worker: "); the tool recognises it by its start,
    "protocol mismatch: " (src/run/python_worker.cpp), so keep that as it is."""
    tool = request.get("protocol", FIRST_PROTOCOL)
    if tool != PROTOCOL_VERSION:
        here = os.path.dirname(os.path.abspath(__file__))
        raise ProtocolMismatch(
            f"protocol mismatch: triton-portcheck speaks protocol {tool}, its worker at {here} "
            f"speaks {PROTOCOL_VERSION}: the binary and the worker files come from different "
            "installs; reinstall triton-portcheck")


def send_line(fd, message):
    """One JSON line on a pipe (the fork server's events, its zygotes' commands and events),
    written whole whatever the pipe takes per write."""
    data = (json.dumps(message, default=_jsonable) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def read_request(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_result(path, result):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, default=_jsonable)
    os.replace(tmp, path)


def _jsonable(value):
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)


class ProgressLog:
    """Appends 'stage NAME' lines to a file the supervisor reads after the process ends."""

    def __init__(self, path):
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if path else None

    def mark(self, stage):
        self.note(f"stage {stage}")

    def note(self, line):
        if self._fd is not None:
            os.write(self._fd, f"{line}\n".encode())

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
