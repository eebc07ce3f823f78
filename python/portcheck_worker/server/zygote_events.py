"""What the fork server hears from its zygotes, and what it does about it: their channels'
events (started, ready, unusable, warmed, forked, exited), a channel that breaks the protocol, a
zygote that ended or is stuck (its import past its deadline, or a fork that never came), and the
shutdown. A mixin of zygote_pool.Zygotes, whose state it reads and whose starts (`_launch`,
`_start_expected*`), counts (`_tell`) and forks (`fork_plain`) it calls.
"""
import os
import sys
import time

from ..base.frozen_json import as_json
from ..forking import channel
from .zygote import ZygoteLost, kill_group


class ZygoteEvents:
    """The event side of zygote_pool.Zygotes."""

    # --- events --------------------------------------------------------------------------------
    def event_fds(self):
        return [z.sock for z in self._all() if z.sock is not None]

    def any(self):
        return any(z.state != "ended" for z in self._all())

    def on_readable(self, sock):
        for zygote in self._all():
            if zygote.sock is sock:
                breaches = []
                messages, ended = channel.receive(sock, "zygote_event", breaches)
                if breaches:
                    self._breached(zygote, breaches[0])
                for message, fds in messages:
                    for fd in fds:
                        os.close(fd)
                    self._on_event(zygote, message)
                if ended:
                    self._on_end(zygote)
                return

    def _breached(self, zygote, breach):
        """A message on a zygote's channel that breaks the protocol was written by code its import
        ran, not by us: from now on its key's cells fork from the server (as for a failed
        import), while what it already forked ends as it would (its valid events still count),
        and it exits once idle. Never the server's end, nor the kernel's fault."""
        if not zygote.usable or zygote.retiring:
            return  # said once
        sys.stderr.write(f"portcheck-worker: the {zygote.role} zygote for {zygote.key} is not used: a message "
                         f"on its channel breaks the protocol ({breach}); its import wrote there\n")
        self._tell("unusable", zygote)
        zygote.state = "unusable"
        if zygote.role == "package" and self.by_key.get(zygote.key) is zygote:
            self.unusable.add(zygote.key)
            del self.by_key[zygote.key]
            self.retired.append(zygote)  # watched until its channel ends (a base stays in bases)
        zygote.retire()

    def _on_event(self, zygote, event):
        """One zygote_event, as its class in channel_messages.py."""
        kind = event.event
        if kind == "started":
            zygote.pid = event.pid
        elif kind == "ready":
            self._on_ready(zygote, event)
        elif kind == "unusable":
            sys.stderr.write(f"portcheck-worker: no {zygote.role} zygote for {zygote.key}: {event.why}\n")
            self._tell("unusable", zygote, event.seconds)
            self._give_up(zygote)
        elif kind == "warmed":
            self._tell("warmed", zygote, event.seconds)
        elif kind == "forked":
            zygote.unforked.pop(event.id, None)
            zygote.sent_at.pop(event.id, None)
            zygote.cells.add(event.pid)
            self.cell_ids[event.pid] = event.id
            self.send_event({"event": "forked", "id": event.id, "pid": event.pid, "threads": event.threads})
        elif kind == "exited":
            zygote.cells.discard(event.pid)
            cell_id = self.cell_ids.pop(event.pid, None)
            if cell_id is not None:
                self.send_event({**as_json(event), "id": cell_id})  # the server_event: the zygote's, its cell's id

    def _on_ready(self, zygote, event):
        zygote.state, zygote.deadline = "ready", None
        zygote.driver_free = bool(event.driver_free)
        zygote.threads = int(event.threads or 1)
        self._tell("ready", zygote, event.seconds)
        children, zygote.waiting_children = zygote.waiting_children, []
        for child in children:
            if child.state == "waiting":
                self._launch(child)
        if zygote.role == "base":
            for key in list(self.expected):
                self._start_expected_early(key)
        if zygote.role == "package" and not zygote.driver_free:
            self._start_expected(zygote.key)
        queued, zygote.queued = zygote.queued, []
        for cell_id, command in queued:
            zygote.submit(cell_id, command)
        if self._compiles(zygote) and not zygote.warm and self.warm_targets is not None:
            zygote.warm_up(self.warm_targets)  # compiles are coming: warm before they ask

    def _on_end(self, zygote):
        """Its channel ended: it exited (retired, unusable, or killed). Raises ZygoteLost if it
        died holding cells."""
        zygote.state, zygote.deadline = "ended", None
        zygote.kill()  # what its import left in its group
        if zygote in self.retired:
            self.retired.remove(zygote)
        if zygote.cells:
            raise ZygoteLost(f"zygote {zygote.pid} died with cells {sorted(zygote.cells)}")
        if zygote.retiring and not zygote.busy():
            return  # retired for memory and done: its key may start a zygote again
        self._give_up(zygote)  # what it held and never forked goes elsewhere

    def _give_up(self, zygote):
        """Its waiting cells go to its base, or the server; its key keeps no zygote; a base's
        waiting package zygotes start from the server."""
        zygote.deadline = None
        if zygote.state != "ended":
            zygote.state = "unusable"
        if zygote.role == "package":
            self.unusable.add(zygote.key)
            if self.by_key.get(zygote.key) is zygote:
                del self.by_key[zygote.key]
                if zygote.sock is not None:  # it exits by itself: watched until its channel ends
                    self.retired.append(zygote)
        children, zygote.waiting_children = zygote.waiting_children, []
        for child in children:
            child.parent = None
            self._launch(child)
        waiting = zygote.queued + list(zygote.unforked.items())
        zygote.queued, zygote.unforked, zygote.sent_at = [], {}, {}
        base = zygote.parent if zygote.parent is not None and zygote.parent.usable else None
        if base is not None and not base.warm and self.warm_targets is not None:
            base.warm_up(self.warm_targets)
        for cell_id, command in waiting:
            if base is not None:
                base.submit(cell_id, command)
            else:
                self.fork_plain(cell_id, command)

    def expire(self):
        """Gives up the zygotes whose import has outlived its deadline, and those that have not
        forked a cell sent to them for as long (stuck in fork(): a lock that a thread of the
        import held when it forked, which an at-fork handler waits for)."""
        now = time.monotonic()
        for zygote in self._all():
            if zygote.state == "importing" and zygote.deadline is not None and now > zygote.deadline:
                self._stuck(zygote, f"its import took longer than {zygote.deadline_s:.0f} s")
            elif zygote.ready and zygote.sent_at and now - min(zygote.sent_at.values()) > zygote.deadline_s:
                self._stuck(zygote, f"it forked no cell for {zygote.deadline_s:.0f} s")

    def _stuck(self, zygote, why):
        self._tell("unusable", zygote, zygote.deadline_s if zygote.state == "importing" else None)
        sys.stderr.write(f"portcheck-worker: no {zygote.role} zygote for {zygote.key}: {why}\n")
        zygote.kill()
        if zygote.cells:  # its cells die with it and nobody is left to report them
            raise ZygoteLost(f"zygote {zygote.pid} stuck with cells {sorted(zygote.cells)}")
        self._give_up(zygote)

    def next_deadline(self):
        deadlines = [z.deadline for z in self._all() if z.deadline is not None and z.state == "importing"]
        deadlines += [min(z.sent_at.values()) + z.deadline_s for z in self._all() if z.ready and z.sent_at]
        return min(deadlines) if deadlines else None

    def shutdown(self):
        for zygote in self._all():
            zygote.kill()
        for pid in list(self.cell_ids):
            kill_group(pid)
