"""Files exchanged with the C++ supervisor: a request in, a result out, progress marks on the way.

The result is written to a temporary file and renamed, so the supervisor never reads half of one.
Progress marks are appended and flushed before each stage starts, so that when the process dies
of a signal, a timeout or the memory limit, the supervisor still knows which stage was running.

The probe is the handshake: the tool's request carries the protocol it speaks, the answer the
worker's (PROTOCOL_VERSION), and each side refuses the other's when they differ.

Every message is defined once, in ../protocol.schema.json, which the tool embeds when it is built:
the worker checks each message it reads against it (`check`), the tool each one it reads.
"""
import json
import os

from . import channels, schema

_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "protocol.schema.json")
with open(_SCHEMA_PATH, encoding="utf-8") as _file:
    SCHEMA = schema.Schema(json.load(_file))
# The protocol this worker speaks: the schema's, so that the number and the messages change together.
PROTOCOL_VERSION = SCHEMA.document["x-protocol-version"]

# The plumbing's primitives, bound now, before any user code runs: a module that sets
# `json.dumps = None`, `builtins.open = None` or `os.write = None` at import must not take the
# worker's own results and events down with it (stdlib_guard.py reports what it broke).
_os_open, _os_write, _os_close, _os_replace, _os_fstat = os.open, os.write, os.close, os.replace, os.fstat
_os_getpid, _os_read = os.getpid, os.read
_DECODER = json.JSONDecoder()
try:
    import fcntl
    _fcntl, _F_DUPFD_CLOEXEC = fcntl.fcntl, fcntl.F_DUPFD_CLOEXEC
except (ImportError, AttributeError):  # pragma: no cover - Linux has both
    _fcntl = _F_DUPFD_CLOEXEC = None
# Above the descriptors a library (or a user's module) dup2()s onto by number: 0-2, 3, 4, ...
_HIGH_FD = 200

# The tool's exit 3: Triton cannot be imported, or this worker does not speak the tool's protocol.
EXIT_ENVIRONMENT = channels.EXIT_ENVIRONMENT
# The marks of `--isolation process`'s parent in the progress file (channels.py says what they mean).
MARK_CHILD_FORKED = channels.MARK_CHILD_FORKED
MARK_CHILD_ENDED = channels.MARK_CHILD_ENDED
# Requests from tools that predate the "protocol" field: they spoke the first protocol.
FIRST_PROTOCOL = 1


# A message that breaks the schema is a bug of triton-portcheck's (the probe has matched the
# versions): the worker says so in one line and exits with the tool's own code for its bugs.
EXIT_BUG = channels.EXIT_BUG


class ProtocolMismatch(Exception):
    """The tool and this worker come from different installs of triton-portcheck."""


class ProtocolError(Exception):
    """A message that is not what protocol.schema.json defines: names the message and member."""


def check(message_kind, message):
    """`message` as read from the tool (or the server, or a zygote), checked against its
    definition; raises ProtocolError naming the member that breaks it."""
    problem = SCHEMA.problem(message_kind, message)
    if problem is not None:
        raise ProtocolError(f"protocol error: {message_kind} breaks protocol {PROTOCOL_VERSION}: {problem} "
                            "(a bug of triton-portcheck: please report it)")


def check_tool_protocol(request):
    """Refuses a request of a tool that speaks another protocol. The message is the one line the
    worker prints (after "portcheck-worker: "); the tool recognises it by its start,
    "protocol mismatch: " (src/run/python_worker.cpp), so keep that as it is."""
    tool = request.get("protocol", FIRST_PROTOCOL) if isinstance(request, dict) else FIRST_PROTOCOL
    if tool != PROTOCOL_VERSION:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the worker package
        raise ProtocolMismatch(
            f"protocol mismatch: triton-portcheck speaks protocol {tool}, its worker at {here} "
            f"speaks {PROTOCOL_VERSION}: the binary and the worker files come from different "
            "installs; reinstall triton-portcheck")


def send_line(fd, message):
    """One JSON line on a pipe (the fork server's events, its zygotes' commands and events),
    written whole whatever the pipe takes per write."""
    _write_all(fd, (_ENCODER.encode(message) + "\n").encode())


def read_request(path):
    # A cell forked from a zygote runs after the user's import: no open() or json.load.
    fd = _os_open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := _os_read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        _os_close(fd)
    return _DECODER.decode(b"".join(chunks).decode("utf-8"))


def write_result(path, result):
    tmp = f"{path}.tmp-{_os_getpid()}"
    fd = _os_open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        _write_all(fd, _ENCODER.encode(result).encode())
    finally:
        _os_close(fd)
    _os_replace(tmp, path)


def _write_all(fd, data):
    while data:
        data = data[_os_write(fd, data):]


def high_fd(fd):
    """`fd` moved above the numbers code dup2()s onto, close-on-exec."""
    if _fcntl is None:
        return fd
    try:
        high = _fcntl(fd, _F_DUPFD_CLOEXEC, _HIGH_FD)
    except OSError:
        return fd
    _os_close(fd)
    return high


def jsonable(value):
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)


# One encoder made now (json.dumps and json.JSONEncoder are the user's to replace later).
_ENCODER = json.JSONEncoder(default=jsonable)


class ProgressLog:
    """Appends 'stage NAME' lines to a file the supervisor reads after the process ends.

    The file stays open across the user's import, which may dup2() something over any descriptor:
    it is kept high, and a mark finds it again by its path when the descriptor no longer is the
    file it opened."""

    def __init__(self, path):
        self._path = path
        self._fd = self._identity = None
        if path:
            self._open()

    def _open(self):
        self._fd = high_fd(_os_open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                                     0o644))
        stat = _os_fstat(self._fd)
        self._identity = (stat.st_dev, stat.st_ino)

    def _still_ours(self):
        try:
            stat = _os_fstat(self._fd)
        except OSError:
            return False
        return (stat.st_dev, stat.st_ino) == self._identity

    def mark(self, stage):
        self.note(f"{channels.STAGE_PREFIX}{stage}")

    def note(self, line):
        if self._fd is None:
            return
        if not self._still_ours():
            self._open()  # the descriptor was taken over: the file is ours, not the number
        _write_all(self._fd, f"{line}\n".encode())

    def close(self):
        if self._fd is not None:
            if self._still_ours():
                _os_close(self._fd)
            self._fd = None
