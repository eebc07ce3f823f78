"""A batch: several cells of one kernel module and target compiled one after another in one forked
child, so that the fork of a zygote (copying the page tables of a gigabyte of torch), the child's
setup and its exit are paid once per batch instead of once per cell (issue 43).

Each cell reads and writes its own files (request, result, progress, stdout and stderr, pointed at
descriptors 1 and 2 before it starts) exactly as it would alone. The batch log tells the tool when
each cell begins and when its result is written, in `time.monotonic()` seconds, the tool's steady
clock: the tool gives each cell its own time limit from its beginning and its own wall time.

A batch never changes a verdict: it imports the cells' module first (where the zygote has not), as
each cell would, and every cell it runs starts from that state; the batch stops after a cell that
failed, or that left the process otherwise: another working folder, environment, import path, signal handler, limit, thread,
user module or Triton setting, a global of the kernel's module (or what a container there holds:
a memo a constexpr_function fills), a standard stream replaced, or memory that the next cells'
limits could count against them. A cell it did not finish (the process ended in it: a crash, exit(), a
limit) is left to the tool, which runs it again alone. The cells a batch never began (it stopped
after a cell, or the tool asked it to stop) were never touched: the tool starts them anew elsewhere.
"""
import os
import resource
import signal
import sys
import threading
import time

from ..base import protocol

BEGUN = "begun"
DONE = "done"
# The tool creates the log's path + this when it wants the cells not yet begun back (a batch that
# runs past its expected time, or cores idle while it holds cells); looked for before each cell.
STOP_SUFFIX = ".stop"

# The limits a cell's code could change for the cells after it.
_LIMITS = tuple(getattr(resource, name) for name in ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_STACK",
                                                     "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_CPU")
                if hasattr(resource, name))
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM", "SIGUSR1",
                                                    "SIGUSR2", "SIGCHLD", "SIGPIPE") if hasattr(signal, name))
# Memory a finished cell may leave behind (Python keeps what it freed) before the next cell's own
# limit could count it: a quarter of the smallest limit to come, or this much where none is set.
_GROWTH_SHARE_OF_LIMIT = 0.25
_GROWTH_WITHOUT_LIMIT = 1 << 30
# Items of a module-level container looked at between two cells.
_CONTAINER_ITEMS = 256
_monotonic = time.monotonic
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Log:
    """Appends "begun ID T" and "done ID T" lines to the batch log; the descriptor kept high, as
    a cell's progress log, since the cells' code may dup2() anything over low numbers."""

    def __init__(self, path):
        self._progress = protocol.ProgressLog(path)

    def mark(self, what, cell_id):
        self._progress.note(f"{what} {cell_id} {_monotonic():.6f}")

    def close(self):
        self._progress.close()


def point_streams_at(cell):
    """Descriptors 1 and 2 (and so the compiler's diagnostics, ptxas's output) to the cell's
    files, truncated as a fresh process's would be."""
    for fd, path in ((1, cell["stdout"]), (2, cell["stderr"])):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)


def state(module_globals):
    """What a cell could leave changed for the next one, compared as a whole; `module_globals`:
    the kernel module's namespace."""
    import triton
    knobs = getattr(triton, "knobs", None)
    groups = sorted(name for name, value in vars(knobs).items() if isinstance(value, knobs.base_knobs)) \
        if knobs is not None and hasattr(knobs, "base_knobs") else []
    return (
        os.getcwd(),
        tuple(sorted(os.environ.items())),
        tuple(sys.path),
        tuple(signal.getsignal(s) for s in _SIGNALS),
        tuple(resource.getrlimit(limit) for limit in _LIMITS),
        _threads(),
        id(sys.stdout), id(sys.stderr),
        frozenset(name for name in sys.modules if _users(name)),
        repr([(name, sorted(vars(getattr(knobs, name)).items())) for name in groups]),
        _namespace(module_globals),
    )


def _namespace(module_globals):
    """What the next cell would read of the kernel's module: each global's identity, and the
    identities inside a container (a memo a constexpr_function fills, a counter it bumps). Never
    the values' own text: their __repr__ is the user's code."""
    out = []
    for name, value in list(module_globals.items()):
        inside = ()
        if type(value) is dict:
            inside = tuple((id(k), id(v)) for k, v in list(value.items())[:_CONTAINER_ITEMS]) + (len(value), )
        elif type(value) in (list, set, frozenset, tuple):
            inside = tuple(id(v) for v in list(value)[:_CONTAINER_ITEMS]) + (len(value), )
        elif type(value) is bytearray:
            inside = (bytes(value[:_CONTAINER_ITEMS]), len(value))
        out.append((name, id(value), inside))
    return tuple(sorted(out, key=lambda entry: entry[0]))


def _threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _users(module):
    """A module of the user's or a third party's: not the standard library, Triton or ours."""
    top = module.split(".")[0]
    return top not in sys.stdlib_module_names and top not in ("triton", "portcheck_worker")


def resident_bytes():
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def memory_allows(grown, remaining):
    """Whether the cells still to come can run on memory that grew by `grown` bytes since the
    batch began without their limits counting it: the smallest limit among them decides."""
    limits = [int(c.get("max_rss_bytes") or 0) for c in remaining]
    limits = [limit for limit in limits if limit > 0]
    allowed = _GROWTH_SHARE_OF_LIMIT * min(limits) if limits else _GROWTH_WITHOUT_LIMIT
    return grown <= allowed


def run(cells, log_path, prepare, run_cell):
    """`prepare(first cell)` imports the cells' module (as a zygote would have imported it) and
    returns the kernel's module namespace, then each cell runs through `run_cell(cell)`, which
    writes its result; the batch stops after a cell that left the process changed. A `prepare`
    that fails ends the batch before any cell begins. What a cell's code raises past `run_cell`
    (SystemExit) propagates: the batch ends in it."""
    log = Log(log_path)
    try:
        point_streams_at(cells[0])
        try:
            module_globals = prepare(cells[0])
        except Exception:  # the cells will say it, one to a child
            return
        born, before = resident_bytes(), state(module_globals)
        for index, cell in enumerate(cells):
            if index > 0:
                if os.path.exists(log_path + STOP_SUFFIX):
                    return  # the tool gives the rest to other processes
                point_streams_at(cell)
            log.mark(BEGUN, cell["id"])
            result = run_cell(cell)
            _flush()
            log.mark(DONE, cell["id"])
            if not _ok(result) or state(module_globals) != before or \
                    not memory_allows(resident_bytes() - born, cells[index + 1:]):
                return
    finally:
        log.close()


def _ok(result):
    """A cell that failed may leave Triton's objects half-changed where no state() looks: a
    JITFunction whose cache_key raised keeps a placeholder hash, so the same kernel compiles in
    the next cell of the process where it fails alone (Triton 3.9's jit.py). The batch stops."""
    return isinstance(result, dict) and result.get("status") == "ok"


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
