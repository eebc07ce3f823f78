"""Zygotes: children of the fork server that import a user's package once and fork its cells.

Importing a real library (flag_gems brings torch) costs seconds, and every cell forked from the
bare server paid it again: 6.5 s of a cell that compiles in 0.1 s. A zygote is forked from the
server, imports what a cell of its key would import - under the same stand-in driver, from the
same folders - and then forks that key's cells, which find their module already loaded.

The key: the target (a module may choose code by vendor at import: it must see the cell's driver),
the import folders, and the top-level package (or the file) of the kernel. Cells of other modules
of the same package import their own module in the child, over the package already loaded, as
they would in the user's program. The inspections' zygote has no target; when its import never
asked Triton's driver (_DriverWatch) it forks every target's compiles, and when it did, the
package's per-target zygotes start as soon as it is ready (_start_expected).

A zygote is only a speed-up, never a verdict. An import that raises, hangs past its deadline,
outgrows its data limit or leaves Python threads behind (fork() copies one thread) makes the
zygote unusable; the cells it held are forked from the bare server, and each meets the fault in
its own cell, as without zygotes. A zygote that dies while cells it forked run (a cell killed its
parent) ends the server, so that the supervisor's retry-and-blame of a lost server applies as it
does when a cell kills the server itself.

Protocol on two pipes, JSON lines:
  server -> zygote  {"id": N, "command": {fork command}} | {"warm": [target, ...]}
                    end of input: exit once idle
  zygote -> server  {"event": "ready"} | {"event": "unusable", "why": "..."}
                    {"event": "forked", "id": N, "pid": P}
                    {"event": "exited", "pid": P, "code": c, "signal": s, "max_rss_bytes": b}
"""
import json
import os
import signal
import sys
import time

from . import protocol, zygote_process

# How long an import may take before its zygote is given up: a share of the cells' own time
# limit, since the cells queued behind it wait that long before they are forked from the server.
_IMPORT_SHARE_OF_TIMEOUT = 0.25
_IMPORT_DEADLINE_S = 120.0
# How much of the server's memory allowance (its session is replaced beyond it) zygotes may hold.
_SHARE_OF_SERVER_RSS = 0.5
_MAX_ZYGOTES = 16
# Where `capture` saves kernels generated at run time, beside the manifest (kGeneratedFolder in
# src/capture/capture_rows.hpp).
_GENERATED_FOLDER = "portcheck-generated"


def key_for(request, any_target=False):
    """The zygote a cell request can be forked from; None for a request no zygote serves.
    `any_target`: the inspections' zygote of the same package, imported with no driver."""
    if "inspect" in request:
        kernels = request["inspect"].get("kernels") or []
        ref, target = (kernels[0].get("kernel") if kernels else None), None
    else:
        ref, target = request.get("kernel"), None if any_target else request.get("target")
    if not isinstance(ref, dict):
        return None
    unit = ref.get("file") or (ref.get("module") or "").split(".")[0]
    if not unit:
        return None
    if ref.get("file") and os.path.basename(os.path.dirname(unit)) == _GENERATED_FOLDER:
        # Modules `capture` saved from one library's run-time code generation (dozens of files,
        # each importing torch): one zygote imports the first, each cell its own over it.
        unit = os.path.dirname(unit)
    return json.dumps([target, ref.get("import_root"), ref.get("pythonpath") or [],
                       "file" if ref.get("file") else "package", unit], sort_keys=True)


class Zygote:
    """The server's handle on one zygote."""

    def __init__(self, key, pid, commands, events, deadline):
        self.key = key
        self.pid = pid
        self.commands = commands  # write end; closed to retire it
        self.events = events  # read end
        self.deadline = deadline  # for the import; None once it is ready
        self.ready = False
        self.queued = []  # (id, command) waiting for the import to finish
        self.unforked = {}  # id -> command sent, no "forked" yet
        self.cells = set()  # pids forked and not yet exited
        self.last_used = time.monotonic()
        self.buffer = b""
        self.ended = False  # its events pipe reached its end: it is exiting
        self.driver_free = False  # its import never asked Triton's driver: serves every target
        self.warm = False  # forked after the server's warm-up, or warmed up itself since

    def submit(self, cell_id, command):
        self.last_used = time.monotonic()
        if not self.ready:
            self.queued.append((cell_id, command))
            return
        self.unforked[cell_id] = command
        if self.commands is not None:
            protocol.send_line(self.commands, {"id": cell_id, "command": command})

    def warm_up(self, targets):
        """It warms up (before any cell sent after this), as the server does."""
        protocol.send_line(self.commands, {"warm": targets})
        self.warm = True

    def retire(self):
        """No more cells: it exits once the ones it forked have ended."""
        if self.commands is not None:
            os.close(self.commands)
            self.commands = None

    def pss(self):
        """Its proportional set size, as the supervisor counts the server's session: the pages
        it shares with the server and its siblings are divided among them."""
        try:
            with open(f"/proc/{self.pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def read_events(self):
        """The complete event lines available now; [] at end of input."""
        try:
            chunk = os.read(self.events, 1 << 16)
        except BlockingIOError:
            return []
        self.ended = self.ended or not chunk
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]


class ZygoteLost(Exception):
    """A zygote died holding cells: the server ends, and the supervisor retries and blames."""


class Zygotes:
    """The server's zygotes, by key. `fork_plain(id, command)` is the server's own fork."""

    def __init__(self, server_pid, fork_plain, send_event):
        self.server_pid = server_pid
        self.fork_plain = fork_plain
        self.send_event = send_event
        self.by_key = {}
        self.unusable = set()  # keys whose zygote failed: their cells fork from the server
        self.cell_ids = {}  # pid of a cell forked by a zygote -> cell id
        self.retired = []  # no more cells; exit once theirs have ended
        self.warm_targets = None  # the server's warm-up, once it has run: zygotes made after inherit it
        self.expected = {}  # inspections' key -> {compile key: (a cell's request, its command)}
        budget = int(os.environ.get("PORTCHECK_SERVER_MAX_RSS", 4 << 30))
        self.rss_budget = int(budget * _SHARE_OF_SERVER_RSS)

    def fork(self, cell_id, command, request):
        """Hands the cell to its zygote (starting one); False: fork it from the server."""
        key = key_for(request)
        if key is None or key in self.unusable:
            return False
        if "inspect" in request:
            self._expect(key, request, command)
        shared = self.by_key.get(key_for(request, any_target=True))
        if shared is not None and shared.ready and shared.driver_free and self._warm(shared, request):
            shared.submit(cell_id, command)
            return True
        zygote = self.by_key.get(key)
        if zygote is None:
            if not self._make_room():
                return False
            zygote = self._start(key, request, command)
            if zygote is None:
                return False
        zygote.submit(cell_id, command)
        return True

    def _expect(self, key, request, command):
        """Notes the compile zygotes an inspection's cells will want (its request lists them)."""
        wanted = self.expected.setdefault(key, {})
        for cell in request["inspect"].get("cells") or []:
            cell_request = cell.get("request") if isinstance(cell, dict) else None
            compile_key = key_for(cell_request) if isinstance(cell_request, dict) else None
            if compile_key is not None:
                wanted.setdefault(compile_key, (cell_request, command))

    def _start_expected(self, key):
        """The inspections' zygote of a package that asks the driver at import is ready: each
        target needs its own import, so those start now, beside the other inspections, instead
        of once the first compiles wait for them (6 s with flag_gems, every job slot idle). As
        many as the memory share allows, judged by the size of the zygote just made."""
        sizes = [z.pss() for z in self._all()]
        budget_used, estimate = sum(sizes), max(sizes)
        for compile_key, (request, command) in self.expected.pop(key, {}).items():
            if compile_key in self.by_key or compile_key in self.unusable:
                continue
            if len(self.by_key) >= _MAX_ZYGOTES or budget_used + estimate > self.rss_budget:
                return
            self._start(compile_key, request, command)
            budget_used += estimate

    def warm_all(self, targets):
        """The server is warming up: the zygotes made before it (the inspections') do the same,
        at the same time, so that they can fork compiles of every target."""
        self.warm_targets = targets
        for zygote in self.by_key.values():
            if not zygote.warm and zygote.commands is not None:
                zygote.warm_up(targets)

    def _warm(self, zygote, request):
        """Whether `zygote` can fork this request's cell warm: a compile forked from a zygote
        made before the server's warm-up (the inspections come first) would initialise every
        backend again, 0.5 s per cell. Such a zygote warms up once, itself."""
        if zygote.warm or "inspect" in request:
            return True
        if self.warm_targets is None:
            return False
        zygote.warm_up(self.warm_targets)
        return True

    def event_fds(self):
        return [z.events for z in self._all() if not z.ended]

    def any(self):
        return bool(self.by_key or self.retired)

    def _start(self, key, request, command):
        commands_read, commands_write = os.pipe()
        events_read, events_write = os.pipe()
        timeout_s = (command.get("timeout_ms") or 0) / 1000.0
        deadline_s = min(_IMPORT_DEADLINE_S, timeout_s * _IMPORT_SHARE_OF_TIMEOUT) \
            if timeout_s > 0 else _IMPORT_DEADLINE_S
        data_limit = self.rss_budget
        if command.get("max_rss_bytes"):
            data_limit = min(data_limit, int(command["max_rss_bytes"]))
        from .server import freeze_heap
        freeze_heap()
        pid = os.fork()
        if pid == 0:
            os.close(commands_write)
            os.close(events_read)
            zygote_process.main(request, commands_read, events_write, self.server_pid, data_limit)
        os.close(commands_read)
        os.close(events_write)
        os.set_blocking(events_read, False)
        zygote = Zygote(key, pid, commands_write, events_read, time.monotonic() + deadline_s)
        zygote.warm = self.warm_targets is not None
        self.by_key[key] = zygote
        return zygote

    def _make_room(self):
        """Before a new zygote: retires zygotes, least recently used first, while they and one
        more of the largest size would exceed their share of the server's memory allowance, or
        are too many. A retired zygote forks nothing more and exits once its cells have ended;
        until then it still counts, as does a zygote still importing, at the largest size seen
        (its import has not reached its size yet: counting what it holds now started dozens at
        once, and the server outgrew its allowance and was replaced again and again). False
        when there is no room even so: the cell is forked from the server."""
        sizes = {z: z.pss() for z in self._all()}
        largest = max(sizes.values(), default=0)
        counted = {z: size if z.ready else max(size, largest) for z, size in sizes.items()}
        total = sum(counted.values())

        def fits():
            return total + largest <= self.rss_budget and len(self.by_key) < _MAX_ZYGOTES

        for zygote in sorted(self.by_key.values(), key=lambda z: z.last_used):
            if fits():
                break
            if not zygote.ready or zygote.queued or zygote.unforked:
                continue  # cells wait on it: they would never be forked
            total -= counted[zygote]  # it exits as soon as its running cells have ended
            self._retire(zygote)
        return fits()

    def _retire(self, zygote):
        del self.by_key[zygote.key]
        zygote.retire()
        self.retired.append(zygote)

    def _all(self):
        return list(self.by_key.values()) + self.retired

    def on_readable(self, fd):
        for zygote in self._all():
            if zygote.events == fd:
                for event in zygote.read_events():
                    self._on_event(zygote, event)
                return

    def _on_event(self, zygote, event):
        kind = event.get("event")
        if kind == "ready":
            zygote.ready, zygote.deadline = True, None
            zygote.driver_free = bool(event.get("driver_free"))
            if not zygote.driver_free:
                self._start_expected(zygote.key)
            queued, zygote.queued = zygote.queued, []
            for cell_id, command in queued:
                zygote.submit(cell_id, command)
        elif kind == "unusable":
            sys.stderr.write(f"portcheck-worker: no zygote for {zygote.key}: {event.get('why')}\n")
            self._give_up(zygote)
        elif kind == "forked":
            zygote.unforked.pop(event["id"], None)
            zygote.cells.add(event["pid"])
            self.cell_ids[event["pid"]] = event["id"]
            self.send_event({"event": "forked", "id": event["id"], "pid": event["pid"]})
        elif kind == "exited":
            zygote.cells.discard(event["pid"])
            cell_id = self.cell_ids.pop(event["pid"], None)
            if cell_id is not None:
                self.send_event({**event, "id": cell_id})

    def _give_up(self, zygote):
        """Its cells not yet forked are forked from the server; its key stays without a zygote."""
        self.unusable.add(zygote.key)
        if self.by_key.get(zygote.key) is zygote:
            self._retire(zygote)
        waiting = zygote.queued + list(zygote.unforked.items())
        zygote.queued, zygote.unforked = [], {}
        for cell_id, command in waiting:
            self.fork_plain(cell_id, command)

    def expire(self):
        """Gives up the zygotes whose import has outlived its deadline."""
        now = time.monotonic()
        for zygote in list(self.by_key.values()):
            if zygote.deadline is not None and now > zygote.deadline:
                _kill_group(zygote.pid)
                self._give_up(zygote)

    def on_exit(self, pid):
        """True if `pid` was a zygote. Raises ZygoteLost if it died holding cells."""
        for zygote in self._all():
            if zygote.pid != pid:
                continue
            for event in zygote.read_events():  # what it said before dying
                self._on_event(zygote, event)
            _kill_group(pid)  # what its import left in its group
            os.close(zygote.events)
            if zygote in self.retired:
                self.retired.remove(zygote)
            if zygote.cells or zygote.unforked:
                raise ZygoteLost(f"zygote {pid} died with cells {sorted(zygote.cells)}")
            self._give_up(zygote)
            if zygote.commands is not None:
                os.close(zygote.commands)
                zygote.commands = None
            return True
        return False

    def next_deadline(self):
        deadlines = [z.deadline for z in self.by_key.values() if z.deadline is not None]
        return min(deadlines) if deadlines else None

    def shutdown(self):
        for zygote in self._all():
            _kill_group(zygote.pid)
        for pid in list(self.cell_ids):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
