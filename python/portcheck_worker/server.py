"""The fork server: import Triton once, warm each backend up, then fork one child per cell.

Protocol: JSON lines. Commands arrive on file descriptor 3, events leave on file descriptor 4,
so that whatever Triton or a user's module prints on stdout cannot corrupt the channel.

  {"op": "probe", "request": {...}}          -> {"event": "probe", "result": {...}}
  {"op": "warm", "targets": [target, ...]}   -> {"event": "warm", "seconds": s, "errors": [...]}
      compiles are coming: with zygotes, those that fork compiles warm up (each on its own core)
      and this process answers at once, warming itself before the first compile it forks
      itself (a fresh rerun, a cell no zygote serves), with a second "warm" event then
  {"op": "fork", "id": N, "request": path, "result": path, "progress": path,
   "stdout": path, "stderr": path}           -> {"event": "forked", "id": N, "pid": P}
                                                 ... later {"event": "exited", "id": N, "pid": P,
                                                            "code": c, "signal": s,
                                                            "max_rss_bytes": b}
  {"op": "quit"} or end of input             -> the server exits

A cell whose package a zygote has imported is forked from that zygote instead (zygote.py): the
package is imported once per target, not once per cell. A fork command with "fresh": true is
always forked from here: the tool reruns so a cell that a threaded zygote forked and that failed
in a way a fork hazard could explain. Every "forked" event says how many threads the process that
forked the cell had ("threads").

Each child starts its own session (so the supervisor can find and kill its whole tree, ptxas
included), points fds 0-2 at the cell's files, and compiles exactly as a fresh worker process
would. The C++ side enforces time and memory limits on that session; this process only forks and
reaps. It must stay single-threaded: fork() copies only the calling thread.
"""
import gc
import json
import os
import select
import signal
import sys
import threading
import time

from . import cell_child, faults, handlers, protocol, signal_guard, zygote_pool, zygote_process
from .zygote import ZygoteLost

COMMAND_FD = 3
EVENT_FD = 4
# "0" turns zygotes off: every cell imports its module itself, as before they existed.
ZYGOTES_ENV = "TRITON_PORTCHECK_ZYGOTES"


class Server:

    def __init__(self):
        self.events = EVENT_FD
        self.children = {}  # pid -> cell id
        self.forks_received = 0
        self.cold_targets = None  # a warm-up put off until this process forks a compile itself
        self._pending = b""
        # SIGCHLD writes a byte here, so a finished child wakes select() at once instead of
        # waiting out its timeout: with many short cells that latency would add up.
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        signal.set_wakeup_fd(self._wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.warmed = False  # its backends warmed up: what it forks inherits that
        self.zygotes = zygote_pool.Zygotes(os.getpid(), self.fork_plain, self.send, self.own_fds,
                                           lambda: self.warmed) \
            if os.environ.get(ZYGOTES_ENV, "1") != "0" else None

    def own_fds(self):
        """What a process forked from here closes: the tool's channel, the wake-up pipe, and
        (zygote_pool.py adds them) the zygotes' channels."""
        return [COMMAND_FD, EVENT_FD, self._wake_read, self._wake_write]

    def send(self, event):
        protocol.send_line(self.events, event)

    def commands(self):
        """Complete command lines available now; None at end of input. Raw reads, because a
        buffered reader would hide lines it has read ahead from select()."""
        zygote_fds = self.zygotes.event_fds() if self.zygotes else []
        readable, _, _ = select.select([COMMAND_FD, self._wake_read, *zygote_fds], [], [],
                                       self._select_timeout())
        if self._wake_read in readable:
            os.read(self._wake_read, 4096)
        for sock in zygote_fds:
            if sock in readable:
                self.zygotes.on_readable(sock)
        if COMMAND_FD not in readable:
            return []
        chunk = os.read(COMMAND_FD, 1 << 16)
        if not chunk:
            return None
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def _select_timeout(self):
        deadline = self.zygotes.next_deadline() if self.zygotes else None
        if deadline is None:
            return 0.5
        return min(0.5, max(0.0, deadline - time.monotonic()))

    def run(self):
        """Until "quit" or the end of input. A probe from a tool of another protocol ends the
        server too (ProtocolMismatch, exit 3 in __main__.py), its children killed all the same."""
        try:
            running = True
            while running:
                batch = self.commands()
                if batch is None:
                    break
                for command in batch:
                    if not self.handle(command):
                        running = False
                        break
                if self.zygotes:
                    self.zygotes.expire()
                self.reap()
        except ZygoteLost as lost:
            # A cell killed the zygote that forked it: as if it had killed this server.
            sys.stderr.write(f"portcheck-worker: {lost}\n")
        finally:
            self.shutdown()

    def handle(self, command):
        op = command.get("op")
        if op == "probe":
            self.send({"event": "probe", "result": handlers.probe(command["request"])})
        elif op == "warm":
            targets = command.get("targets", [])
            if self.zygotes:
                # The cells are forked from zygotes, which warm up themselves; blocking here would
                # keep the zygotes' first cells waiting on this loop.
                self.zygotes.warm_all(targets)
                self.cold_targets = targets
                self.send({"event": "warm", "seconds": 0.0, "errors": [], "deferred": True})
            else:
                self.send({"event": "warm", **self.warm_up(targets)})
        elif op == "fork":
            self.fork(command)
        elif op == "quit":
            return False
        else:
            self.send({"event": "error", "message": f"unknown op {op!r}"})
        return True

    def fork(self, command):
        self.forks_received += 1
        faults.maybe_inject_server(self.forks_received)
        if not command.get("fresh") and self.zygotes and \
                self.zygotes.fork(command["id"], command, _read_request(command)):
            return
        self.fork_plain(command["id"], command)

    def warm_up(self, targets):
        answer = warm_up(targets)
        self.warmed = True
        return answer

    def fork_plain(self, cell_id, command):
        if self.cold_targets is not None and command.get("compiles", True):
            targets, self.cold_targets = self.cold_targets, None
            self.send({"event": "warm", **self.warm_up(targets)})
        if threading.active_count() > 1:
            # Nothing we import starts threads (the warm-up reports the count); say so loudly if
            # a user's module does, since only the forking thread survives in the child.
            sys.stderr.write(f"portcheck-worker: forking with {threading.active_count()} threads\n")
        server = os.getpid()
        threads = zygote_process.threads_now()
        inherited = self.own_fds() + [s.fileno() for s in (self.zygotes.event_fds() if self.zygotes else [])]
        freeze_heap()
        pid = os.fork()
        if pid == 0:
            run_child(command, server, inherited)  # never returns
        self.children[pid] = cell_id
        self.send({"event": "forked", "id": cell_id, "pid": pid, "threads": threads})

    def reap(self):
        if not self.children and not (self.zygotes and self.zygotes.any()):
            return
        for pid, how in ended_children():
            cell = self.children.pop(pid, None)
            if cell is not None:
                self.send({"event": "exited", "id": cell, "pid": pid, **how})
            # else a zygote (its channel's end tells the pool) or something a cell left

    def shutdown(self):
        if self.zygotes:
            self.zygotes.shutdown()
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 5
        while self.children and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.01)


def warm_up(targets):
    """Compile one tiny kernel per backend, so LLVM and each backend are initialised once here
    instead of in every child (the first compile in a process costs ~0.5 s)."""
    handlers.import_triton()  # exits 3 without it, as the probe would
    import triton
    import triton.language as tl
    from triton.compiler import ASTSource
    from . import driver
    from .stages import make_target

    @triton.jit
    def _portcheck_warm_up(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)

    from triton import knobs
    # Compiled, never read from Triton's cache: a zygote warms up after the server, whose warm-up
    # kernel is then in the cache, and a hit would initialise nothing (0.04 s more per cell).
    knobs.compilation.always_compile = True
    started = time.perf_counter()
    errors = []
    if any(spec["backend"] == "cuda" for spec in targets):
        _resolve_nvidia_tools()
    signal_guard.prepare()
    seen = set()
    for spec in targets:
        if spec["backend"] in seen:
            continue
        seen.add(spec["backend"])
        target = make_target(spec)
        try:
            driver.install(target)
            src = ASTSource(_portcheck_warm_up, {"x_ptr": "*fp32", "BLOCK": "constexpr"}, {(1, ): 64})
            triton.compile(src, target=target, options={"num_warps": 1})
        except Exception as e:  # a broken backend shows up in the cells themselves
            errors.append(f"{spec['backend']}: {type(e).__name__}: {e}")
        finally:
            driver.uninstall()
    return {"seconds": time.perf_counter() - started, "errors": errors,
            "threads": threading.active_count()}


def _resolve_nvidia_tools():
    """Triton finds each NVIDIA tool by running `TOOL --version` the first time it is asked for it,
    and remembers the answer per process (NvidiaTool.from_path is lru_cached). Asked here, once,
    every forked child inherits the answers: otherwise each CUDA cell ran `cuobjdump --version`
    (and `ptxas --version` for the ptxas the warm-up did not use) before its real work."""
    from triton import knobs
    for name in ("ptxas", "ptxas_blackwell", "cuobjdump", "nvdisasm"):
        try:
            getattr(knobs.nvidia, name)
        except Exception:  # a tool this Triton lacks fails in the cell that needs it, as before
            pass


def ended_children():
    """(pid, {"code": exit status or None, "signal": signal or None, "max_rss_bytes": the
    high-water mark of its largest process}) of each child of this process that has ended,
    without waiting for any. The tool samples a cell's memory only every few tens of
    milliseconds; the kernel's own peak is exact for a cell shorter than that."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, {"code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "max_rss_bytes": usage.ru_maxrss * 1024}


def freeze_heap():
    """Before a fork: the objects alive now are left out of the garbage collector's passes, in
    this process and in the child. A collection in the child otherwise writes to every object's
    header, copying the whole inherited heap page by page: 16 ms of a cell's life with Triton
    loaded, far more with torch (gc.freeze exists for this)."""
    gc.freeze()


def _read_request(command):
    """The cell's request, for its zygote's key; {} if unreadable (the cell reports that)."""
    try:
        return protocol.read_request(command["request"])
    except Exception:
        return {}


def run_child(command, server, inherited=(COMMAND_FD, EVENT_FD)):
    """In the forked child: become a session leader, take the cell's files, compile, exit; die
    with the server (cell_child.compile_and_exit); a cell whose code killed the server cannot
    signal triton-portcheck, to which it is re-parented until then (signal_guard)."""
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(command["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(command["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (null, out, err, *inherited):
            try:
                os.close(fd)
            except OSError:
                pass
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
    except BaseException:  # report on whatever stderr we have; the supervisor sees the status
        import traceback
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(_CHILD_FAILED)
    cell_child.compile_and_exit(command["request"], command["result"], command["progress"],
                                failure_code=_CHILD_FAILED, parent=server)


# The status of a forked cell that failed outside its compile (EX_SOFTWARE).
_CHILD_FAILED = 70


def main():
    # The supervisor started us in our own session; children make their own.
    Server().run()
    return 0
