"""The fork server: import Triton once, warm each backend up, then fork one child per cell.

Protocol: JSON lines, commands in on file descriptor 3, events out on file descriptor 4, so that
whatever Triton or a user's module prints on stdout cannot corrupt the channel. Each line is a
server_command or a server_event of ../protocol.schema.json, which defines every field; in short:
probe -> probe (the environment); warm -> warm (compiles are coming: with zygotes, those that fork
compiles warm up, each on its own core, and this process answers at once, "deferred", warming
itself, with a second "warm" event, before the first compile it forks itself); fork -> forked,
later exited (one per cell or batch); quit, or the end of input, ends the server.

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
import json
import os
import select
import signal
import sys
import threading
import time

from . import probe, zygote_pool
from ..base import channel_messages, channels, faults, forks, protocol
from ..base.channel_messages import ForkCommand, ProbeCommand, QuitCommand, WarmCommand
from ..forking.fork import COMMAND_FD, EVENT_FD, ended_children, freeze_heap, run_child
from ..forking.warm_up import warm_up
from .zygote import ZygoteLost

# "0" turns zygotes off: every cell imports its module itself, as before they existed.
ZYGOTES_ENV = channels.ENV_ZYGOTES


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

    def handle(self, raw):
        """One server_command (protocol.schema.json), as read from the tool; False for "quit". A
        command that breaks the protocol is answered with an "error" event, which the tool reports
        as its own bug. A probe's request is checked after the tool's protocol version: a tool of
        another install is told that (ProtocolMismatch ends the server, exit 3), not which field
        differs."""
        try:
            command = channel_messages.server_command(raw)
            return {ProbeCommand: self.on_probe, WarmCommand: self.on_warm, ForkCommand: self.fork,
                    QuitCommand: lambda _: False}[type(command)](command) is not False
        except protocol.ProtocolError as e:
            self.send({"event": "error", "message": str(e)})
            return True

    def on_probe(self, command):
        self.send({"event": "probe", "result": probe.handle_probe(command.request)})

    def on_warm(self, command):
        targets = command.targets
        if self.zygotes:
            # The cells are forked from zygotes, which warm up themselves; blocking here would
            # keep the zygotes' first cells waiting on this loop.
            self.zygotes.warm_all(targets)
            self.cold_targets = targets
            self.send({"event": "warm", "seconds": 0.0, "errors": [], "deferred": True})
        else:
            self.send({"event": "warm", **self.warm_up(targets)})

    def fork(self, command):
        self.forks_received += 1
        faults.maybe_inject_server(self.forks_received)
        route = command.route  # read with the command (fork_route): the request file is never read here
        if not command.fresh and self.zygotes and route is not None and \
                self.zygotes.fork(command.id, command, route):
            return
        self.fork_plain(command.id, command)

    def warm_up(self, targets):
        answer = warm_up(targets)
        self.warmed = True
        return answer

    def fork_plain(self, cell_id, command):
        if self.cold_targets is not None and command.compiles:
            targets, self.cold_targets = self.cold_targets, None
            self.send({"event": "warm", **self.warm_up(targets)})
        if threading.active_count() > 1:
            # Nothing we import starts threads (the warm-up reports the count); say so loudly if
            # a user's module does, since only the forking thread survives in the child.
            sys.stderr.write(f"portcheck-worker: forking with {threading.active_count()} threads\n")
        server = os.getpid()
        threads = forks.threads_now()
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


def main():
    # The supervisor started us in our own session; children make their own.
    Server().run()
    return 0
