"""The zygote process itself (zygote.py is the server's side): imports a cell's package as the
cell would, says whether it can serve, then forks the cells the server sends until its input
ends and its cells have ended. Protocol in zygote.py."""
import json
import os
import resource
import select
import signal
import threading

from .protocol import send_line



def main(request, commands, events, server_pid, data_limit):
    """Never returns: imports, says whether it can serve, then forks cells until its input ends
    and its cells have ended."""
    try:
        _become_zygote(server_pid)
        why, driver_free = _import_for(request, data_limit)
        if why is None and threading.active_count() > 1:
            why = f"the import left {threading.active_count()} Python threads; fork copies one"
        if why is not None:
            send_line(events, {"event": "unusable", "why": why})
            os._exit(0)
        send_line(events, {"event": "ready", "driver_free": driver_free})
        _serve(commands, events, server_pid)
    except BaseException:  # never unwind into the server's code
        pass
    os._exit(0)


def _become_zygote(server_pid):
    from . import cell_child, signal_guard
    from .server import COMMAND_FD, EVENT_FD
    cell_child.die_with_parent(server_pid)
    os.setpgid(0, 0)  # its own group in the server's session: killed with what its import left
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in (null, COMMAND_FD, EVENT_FD):
        os.close(fd)
    # Before any user code, as in a cell; and its import cannot signal the server either: a
    # module that kills its parent does so in each of its cells, each its own red cell, while
    # here it would take every cell of the server with it.
    signal_guard.install(also=(server_pid, ))


def _import_for(request, data_limit):
    """Imports what a cell of this request imports, as it would (handlers.cell). Returns (why not,
    or None; whether the import left Triton's driver alone). The data limit holds only for the
    import: the cells have their own limits."""
    from . import driver, loader
    from .stages import make_target
    old = resource.getrlimit(resource.RLIMIT_DATA)
    watch = None
    try:
        if data_limit > 0 and (old[1] == resource.RLIM_INFINITY or data_limit < old[1]):
            resource.setrlimit(resource.RLIMIT_DATA, (data_limit, old[1]))
        if "inspect" in request:
            ref = request["inspect"]["kernels"][0]["kernel"]
            watch = _DriverWatch()
        else:
            ref = request["kernel"]
            driver.install(make_target(request["target"]))
        loader.load_kernel(ref)
        return None, watch is not None and not watch.asked()
    except BaseException as e:
        return f"{type(e).__name__}: {e}", False
    finally:
        if watch is not None:
            watch.stop()
        resource.setrlimit(resource.RLIMIT_DATA, old)


class _DriverWatch:
    """Notes whether an import asks Triton's driver anything (`driver.active`, `.default`, or sets
    it), the only thing a compile-only import sees differ from one target to the next: the
    stand-in driver reports the cell's target. An import that never asks is the same for every
    target, so the inspection's zygote can fork every target's cells of that package: one import
    per package instead of one per package and target. Swaps the class of Triton's DriverConfig
    object for a subclass for the import's duration; each call still does what it did."""

    def __init__(self):
        from triton.runtime import driver as config
        base = type(config)
        asked = []

        def noting(name):
            def call(this, *args):
                asked.append(name)
                original = getattr(base, name)
                return original.fget(this) if isinstance(original, property) else original(this, *args)
            return property(call) if isinstance(getattr(base, name), property) else call

        self._config, self._base, self._asked = config, base, asked
        members = {name: noting(name) for name in ("active", "default", "set_active", "reset_active")
                   if hasattr(base, name)}
        config.__class__ = type("WatchedDriverConfig", (base, ), members)

    def asked(self):
        return bool(self._asked)

    def stop(self):
        self._config.__class__ = self._base


def _serve(commands, events, server_pid):
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children, pending, open_input = set(), b"", True
    while open_input or children:
        readable, _, _ = select.select([commands, wake_read] if open_input else [wake_read],
                                       [], [], 0.5)
        if wake_read in readable:
            os.read(wake_read, 4096)
        if commands in readable:
            chunk = os.read(commands, 1 << 16)
            open_input = bool(chunk)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in filter(bytes.strip, lines):
                message = json.loads(line)
                if "warm" in message:
                    _warm_up(message["warm"])
                    continue
                pid = _fork_cell(message["command"], (commands, events, wake_read, wake_write))
                children.add(pid)
                send_line(events, {"event": "forked", "id": message["id"], "pid": pid})
        _reap(children, events)


def _warm_up(targets):
    from . import server
    try:
        server.warm_up(targets)
    except BaseException:  # a backend that cannot warm up fails in the cells, as in the server
        pass


def _fork_cell(command, own_fds):
    from . import server
    zygote = os.getpid()
    server.freeze_heap()
    pid = os.fork()
    if pid == 0:
        for fd in own_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        server.run_child(command, zygote, inherited=())  # never returns
    return pid


def _reap(children, events):
    from .server import ended_children
    if not children:
        return
    for pid, how in ended_children():
        if pid in children:  # else a process its import left, ended
            children.discard(pid)
            send_line(events, {"event": "exited", "pid": pid, **how})
