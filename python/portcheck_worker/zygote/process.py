"""The zygote process itself (server/zygote.py is the server's side): imports what it was made for, says
whether it can serve, then forks what the server asks for until its channel ends and its children
have ended. Protocol: server/zygote.py.

Two kinds, one loop:
- a *base* imports the third-party modules a package's import begins with (server/import_scan.py),
  with no driver, and then forks package zygotes (`spawn`) and, where those cannot serve, cells;
- a *package* zygote imports a kernel's module as a cell would, under the target's stand-in driver
  (or, for the inspections, under none, noting whether the import asks the driver), and forks
  that key's cells.

An import that leaves threads running is fine: fork() copies the calling thread only, which is all
a cell needs. What a thread held at that moment (a lock) stays held in the child; every fork
therefore reports how many threads the forking process had (or inherited from its own parent),
and the tool runs again, in a fresh process, any such cell that fails in a way a fork hazard could
explain (docs/how-it-works.md).
"""
import importlib
import os
import resource
import select
import signal
import socket
import time

from ..base import at_fork, huge_pages, signal_guard
from ..base.channel_messages import ZygoteFork, ZygoteSpawn, ZygoteWarm
from ..base.forks import quiet_fork, threads_now
from ..cell import child as cell_child
from ..compile import driver, loader
from ..compile.stages import make_target
from ..forking import channel, fork as forking, warm_up
from ..forking.fork import ended_children


# Descriptors no child of this process may keep: its channel (a child holding it would hide this
# zygote's end from the server), and a spawned zygote's channel while it is being handed on. Closed
# in every child forked here, the user's own forks included (os.register_at_fork).
_CLOSE_IN_CHILDREN = set()
_AT_FORK = []  # registered once per process tree: children inherit the registration


def _close_in_child():
    for fd in list(_CLOSE_IN_CHILDREN):
        _close(fd)
    _CLOSE_IN_CHILDREN.clear()


def main(spec, sock, server_pid, parent_pid, close_fds=(), parent_threads=1):
    """Never returns: imports what `spec` (a channel_messages.ZygoteSpec) says, says whether it
    can serve, then serves until its input ends and its children have ended. `parent_threads`:
    the threads of the base it was forked from, a fork hazard its cells inherit."""
    try:
        _become_zygote(server_pid, parent_pid, close_fds)
        sock = channel.out_of_reach(sock)
        _CLOSE_IN_CHILDREN.clear()
        _CLOSE_IN_CHILDREN.add(sock.fileno())
        if not _AT_FORK:
            os.register_at_fork(after_in_child=_close_in_child)
            _AT_FORK.append(True)
        channel.send(sock, {"event": "started", "pid": os.getpid()})
        started = time.monotonic()
        why, driver_free = _import_for(spec)
        seconds = time.monotonic() - started
        if why is not None:
            channel.send(sock, {"event": "unusable", "why": why, "seconds": seconds})
            os._exit(0)
        huge_pages.collapse_anonymous_memory()  # each fork from here copies less (huge_pages.py)
        hazard = max(threads_now(), parent_threads)
        channel.send(sock, {"event": "ready", "driver_free": driver_free, "threads": hazard,
                            "seconds": seconds})
        _Serve(sock, server_pid, parent_threads).run()
    except BaseException:  # never unwind into the parent's code
        pass
    os._exit(0)


def _become_zygote(server_pid, parent_pid, close_fds):
    cell_child.die_with_parent(parent_pid)
    os.setpgid(0, 0)  # its own group in the server's session: killed with what its import left
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in (null, *close_fds):
        _close(fd)
    # Before any user code, as in a cell; and its import cannot signal the server or the base it
    # was forked from: a module that kills its parent does so in each of its cells, each its own
    # red cell, while here it would take every cell of the server with it.
    signal_guard.install(also=tuple({server_pid, parent_pid}))


def _import_for(spec):
    """(why it cannot serve, or None; whether the import left Triton's driver alone). The data
    limit holds for the import only: the cells have their own limits."""
    old = resource.getrlimit(resource.RLIMIT_DATA)
    limit = int(spec.data_limit or 0)
    try:
        if limit > 0 and (old[1] == resource.RLIM_INFINITY or limit < old[1]):
            resource.setrlimit(resource.RLIMIT_DATA, (limit, old[1]))
        with at_fork.recording():
            if spec.role == "base":
                return _import_third_party(spec), True
            return _import_package(spec)
    except BaseException as e:
        return f"{type(e).__name__}: {e}", False
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, old)
        _reopen_standard_fds()


def _reopen_standard_fds():
    """An import that closed descriptors 0-2 (as a daemonising module does) would hand them to
    the next descriptors this zygote opens (its wake-up pipe), which the cells it forks must not
    take for their standard streams: each closed one points at /dev/null again, as before the
    import."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _import_package(spec):
    watch = None
    try:
        if spec.target is None:
            watch = driver.DriverWatch()
        else:
            driver.install(make_target(spec.target))
        loader.load_kernel(spec.ref)
        return None, watch is not None and not watch.asked()
    finally:
        if watch is not None:
            watch.stop()


def _import_third_party(spec):
    """Imports the modules the package's import begins with, as its `import X` / `from X import a`
    statements would, with the manifest's folders on sys.path as a cell has them. It stops at the
    first that is not installed (nothing of it ran: from there the user's import may take another
    path, which the package zygote follows itself). Any other failure (the import ran and failed:
    importing it again would not be the same), or an import that asks Triton's driver (it would
    depend on the target), makes the base unusable."""
    loader.add_import_folders(spec.ref)
    watch = driver.DriverWatch()
    try:
        for statement in spec.third_party:
            if not _import_as_written(statement.module, statement.names):
                break
            if watch.asked():
                return f"importing {statement.module} asked Triton's driver: it depends on the target"
        return None
    finally:
        watch.stop()


def _import_as_written(name, attributes):
    """`import name` / `from name import attributes`; False when `name` (or a submodule named by
    an attribute) is not installed at all. Raises what a failing import raises."""
    wanted = name
    try:
        module = importlib.import_module(name)
        for attribute in attributes:
            if attribute != "*" and not hasattr(module, attribute):
                wanted = f"{name}.{attribute}"
                importlib.import_module(wanted)
        return True
    except ModuleNotFoundError as e:
        if e.name and (wanted == e.name or wanted.startswith(e.name + ".")):
            return False
        raise


class _Serve:
    """The loop after the import: forks cells and zygotes on request, reports their ends."""

    def __init__(self, sock, server_pid, inherited_threads):
        self.sock = sock
        self.server_pid = server_pid
        self.inherited_threads = inherited_threads
        self.cells = set()
        self.zygotes = set()  # package zygotes this base forked: reaped here, reported by themselves
        self.open = True
        self.wake_read, self.wake_write = os.pipe()
        _CLOSE_IN_CHILDREN.update((self.wake_read, self.wake_write))
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def run(self):
        while self.open or self.cells or self.zygotes:
            waiting = [self.sock, self.wake_read] if self.open else [self.wake_read]
            readable, _, _ = select.select(waiting, [], [], 0.5)
            if self.wake_read in readable:
                os.read(self.wake_read, 4096)
            if self.sock in readable:
                messages, ended = channel.receive(self.sock, "zygote_command")
                for _, fds in messages:  # until each is handed on or closed
                    _CLOSE_IN_CHILDREN.update(fds)
                for message, fds in messages:
                    self.handle(message, fds)
                    for fd in fds:
                        _CLOSE_IN_CHILDREN.discard(fd)
                        _close(fd)
                self.open = self.open and not ended
            self.reap()

    def handle(self, message, fds):
        """One zygote_command (channel_messages.py): warm up, spawn a package zygote, fork a cell."""
        if isinstance(message, ZygoteWarm):
            started = time.monotonic()
            _warm_up(message.warm)
            channel.send(self.sock, {"event": "warmed", "seconds": time.monotonic() - started})
        elif isinstance(message, ZygoteSpawn) and fds:
            self.spawn(message.spawn, fds[0])
        elif isinstance(message, ZygoteFork):
            pid, threads = self.fork_cell(message.command)
            self.cells.add(pid)
            channel.send(self.sock, {"event": "forked", "id": message.id, "pid": pid, "threads": threads})

    def hazard(self):
        return max(threads_now(), self.inherited_threads)

    def _fork(self):
        forking.freeze_heap()
        return quiet_fork()

    def fork_cell(self, command):
        threads = self.hazard()
        me = os.getpid()
        pid = self._fork()
        if pid == 0:  # the at-fork handler has closed this zygote's descriptors
            forking.run_child(command, me, inherited=())  # never returns
        return pid, threads

    def spawn(self, spec, fd):
        """A package zygote forked from this base: it talks to the server on `fd`."""
        threads = self.hazard()
        me = os.getpid()
        _CLOSE_IN_CHILDREN.discard(fd)  # the one descriptor the child keeps
        pid = self._fork()
        if pid == 0:  # the at-fork handler has closed the rest
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            main(spec, _socket_of(fd), self.server_pid, me, parent_threads=threads)
        self.zygotes.add(pid)

    def reap(self):
        if not (self.cells or self.zygotes):
            return
        for pid, how in ended_children():
            if pid in self.cells:
                self.cells.discard(pid)
                channel.send(self.sock, {"event": "exited", "pid": pid, **how})
            self.zygotes.discard(pid)  # else a process its import left, ended


def _socket_of(fd):
    return socket.socket(fileno=fd)


def _warm_up(targets):
    try:
        warm_up.warm_up(targets)
    except BaseException:  # a backend that cannot warm up fails in the cells, as in the server
        pass
    huge_pages.collapse_anonymous_memory()  # what the warm-up allocated, too


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass
