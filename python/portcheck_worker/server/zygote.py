"""Zygotes: processes the fork server forks (or has a base zygote fork) that import a user's
package once and then fork its cells, which find it imported.

Importing a real library costs seconds (torch and transformers: 17-19 s on the H200 machine), and
every cell forked from the bare server paid it again for a compile of a tenth of a second.

- A *package zygote* per key - the target (a module may choose code by vendor at import: it must
  see the cell's driver), the import folders, the top-level package (or the file) - imports what a
  cell of that key imports, under the same stand-in driver, and forks that key's cells. Cells of
  other modules of the package import their own module over the loaded package, as they would in
  the user's program. The inspections' zygote has no target; when its import never asked
  Triton's driver it forks every target's compiles (one import in all), and when it did, the
  per-target zygotes start as soon as it is ready (zygote_pool.py).
- A *base zygote* per set of third-party imports (import_scan.py: torch, transformers, ... that
  the package's import begins with) imports those, with no driver, and forks the package zygotes:
  what is the same for every target is imported once, and each target pays only for the user's
  package. Where a package zygote cannot serve, the base forks that key's cells itself.

A zygote is only a speed-up, never a verdict. An import that raises, hangs past its deadline or
outgrows its data limit makes it unusable, and its cells are forked from its base, or the bare
server. Threads an import leaves are allowed: each fork reports the thread count of the process
it was made from, and the tool reruns in a fresh process a cell from a threaded process that
fails in a way a fork hazard could explain. A zygote that dies while cells it forked run (a cell
killed its parent) ends the server, so that the supervisor's retry-and-blame of a lost server
applies as it does when a cell kills the server itself.

Protocol (channel.py: a socketpair, one JSON message per packet): zygote_command (server to
zygote: fork a cell, warm up, or - to a base - spawn a package zygote, whose end of its own
socketpair travels with the message) and zygote_event (zygote to server: started, ready, unusable,
warmed, forked, exited), both defined in ../protocol.schema.json. The end of input tells a zygote
to exit once its children have ended.
"""
import os
import signal
import socket
import time

from ..base.frozen_json import as_json
from ..forking import channel


def is_inspection(route):
    """The fork_route (channel_messages.ForkRoute) of an inspect_request: it imports a module for
    no target, or for the one target whose cells it keys."""
    return route.kind == "inspect"


def kernel_ref(route):
    """The kernel reference the routed request imports."""
    return route.kernel


def key_for(route, any_target=False):
    """The package zygote a routed request can be forked from, as the tool decided it (the route's
    "zygote", src/check/zygote_key.cpp: the tool groups and batches cells by the same key); None for
    a request no zygote serves. `any_target`: the inspections' zygote of the same package,
    imported with no driver."""
    zygote = route.zygote
    if zygote is None:
        return None
    return zygote.any_target if any_target else zygote.key


class Zygote:
    """The server's handle on one zygote, base or package."""

    def __init__(self, key, spec, parent, deadline_s):
        self.key = key
        self.spec = spec  # what it imports (zygote_process.main): a channel_messages.ZygoteSpec
        self.role = spec.role
        self.parent = parent  # the base it is forked from, or None (the server)
        self.deadline_s = deadline_s
        self.deadline = None  # for the import, once launched; None once it answered
        self.sock = None  # the server's end of its channel, once launched
        self.pid = None  # known once it said "started"
        self.state = "waiting"  # for its parent | importing | ready | unusable | ended
        self.queued = []  # (id, command) waiting for the import to finish
        self.unforked = {}  # id -> command sent, no "forked" yet
        self.sent_at = {}  # id -> when it was sent (a zygote stuck in fork() is given up)
        self.cells = set()  # pids forked and not yet exited
        self.waiting_children = []  # package zygotes a base forks once it is ready
        self.last_used = time.monotonic()
        self.driver_free = False  # its import never asked Triton's driver: serves every target
        self.warm = False  # made after the server's warm-up, or warmed up itself since
        self.threads = 1  # of the process it forks from, its parent's included
        self.retiring = False

    @property
    def ready(self):
        return self.state == "ready"

    @property
    def usable(self):
        return self.state in ("waiting", "importing", "ready")

    def busy(self):
        return bool(self.queued or self.unforked or self.cells or self.waiting_children)

    def send(self, message, fds=()):
        """False when it is gone (its end of input shows that too)."""
        if self.sock is None or self.retiring:
            return False
        try:
            channel.send(self.sock, message, fds)
            return True
        except OSError:
            return False

    def submit(self, cell_id, command):
        """`command`: the cell's channel_messages.ForkCommand, passed on as its JSON."""
        self.last_used = time.monotonic()
        if not self.ready:
            self.queued.append((cell_id, command))
            return
        self.unforked[cell_id] = command
        self.sent_at[cell_id] = time.monotonic()
        # A send that fails leaves it in unforked: the channel's end reroutes it (zygote_pool).
        self.send({"id": cell_id, "command": as_json(command)})

    def warm_up(self, targets):
        """It warms up (before anything sent after this), as the server does."""
        self.send({"warm": as_json(targets)})
        self.warm = True

    def retire(self):
        """No more work: it exits once its children have ended."""
        if self.sock is not None and not self.retiring:
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.retiring = True

    def pss(self):
        """Its proportional set size: the pages it shares with the server, its base and its
        siblings are divided among them."""
        if self.pid is None:
            return 0
        try:
            with open(f"/proc/{self.pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def kill(self):
        """Kills it and what its import left in its group; closes the channel."""
        if self.pid is not None:
            kill_group(self.pid)
        self.close()

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class ZygoteLost(Exception):
    """A zygote died holding cells: the server ends, and the supervisor retries and blames."""


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
