"""The fork server's zygotes (zygote.py says what they are): which one forks a cell, and starting
them. What they say and how they end is zygote_events.py; how many are kept, within a share of
the server's memory allowance (`--worker-max-rss`), is zygote_memory.py. Starts, unusable
imports, retirements and import seconds are counted and reported to the tool (`_tell`).
"""
import os
import time

from . import import_scan, zygote_memory
from .zygote import Zygote, is_inspection, kernel_ref, key_for
from .zygote_events import ZygoteEvents
from ..forking import channel
from ..base import channels
from ..base.channel_messages import ForkRoute, ThirdPartyImport, ZygoteSpec
from ..base.frozen_json import as_json
from ..forking.fork import freeze_heap
from ..zygote import process as zygote_process

# How long an import may take before its zygote is given up: a share of the cells' own time
# limit, since the cells queued behind it wait that long before they are forked elsewhere.
_IMPORT_SHARE_OF_TIMEOUT = 0.25
_IMPORT_DEADLINE_S = 120.0


class Zygotes(ZygoteEvents):
    """The server's zygotes (their events: zygote_events.py; their memory: zygote_memory.py).
    `fork_plain(id, command)` is the server's own fork, `send_event` its
    channel to the tool, `server_fds()` the descriptors a process it forks must close,
    `server_warm()` whether the server has warmed its backends up (what it forks inherits that)."""

    def __init__(self, server_pid, fork_plain, send_event, server_fds, server_warm):
        self.server_pid = server_pid
        self.fork_plain = fork_plain
        self.send_event = send_event
        self.server_fds = server_fds
        self.server_warm = server_warm
        self.by_key = {}  # package zygotes
        self.bases = {}  # base key -> base (kept when unusable, so it is not started again)
        self.unusable = set()  # package keys whose zygote failed
        self.cell_ids = {}  # pid of a cell a zygote forked -> cell id
        self.retired = []  # no more work; they exit once their children have ended
        self.warm_targets = None  # the server's warm-up, once it has run: zygotes made after inherit it
        self.expected = {}  # inspections' key -> {compile key: (a cell's fork_route, its command)}
        self.scans = {}  # kernel reference -> its third-party imports (import_scan)
        budget = int(os.environ.get(channels.ENV_SERVER_MAX_RSS, 4 << 30))
        self.rss_budget = int(budget * zygote_memory.SHARE_OF_SERVER_RSS)
        self.jobs = max(1, int(os.environ.get(channels.ENV_SERVER_JOBS) or 1))

    # --- which process forks a cell ----------------------------------------------------------
    def fork(self, cell_id, command, route):
        """Hands the cell to a zygote (starting one); False: fork it from the server."""
        key = key_for(route)
        if key is None:
            return False
        if not is_inspection(route):
            return self._fork_keyed(cell_id, command, route, key)
        self._expect(key, route, command)
        forked = self._fork_keyed(cell_id, command, route, key)
        self._start_expected_early(key)
        return forked

    def _fork_keyed(self, cell_id, command, route, key):
        shared = self.by_key.get(key_for(route, any_target=True))
        zygote = None if key in self.unusable else self.by_key.get(key)
        own_ready = zygote is not None and zygote.ready
        if not own_ready and shared is not None and shared.ready and shared.driver_free and \
                self._warm(shared, route):
            shared.submit(cell_id, command)
            return True
        if zygote is None and key not in self.unusable:
            zygote = self._start_package(key, route, command)
        if zygote is None:
            return self._fork_from_base(cell_id, command, route)
        zygote.submit(cell_id, command)
        return True

    def _fork_from_base(self, cell_id, command, route):
        """A cell whose package zygote cannot serve: its base forks it, over the third-party
        modules it imported; the cell imports its own module."""
        base = self.bases.get(self._base_key(route))
        if base is None or not base.usable or not self._warm(base, route):
            return False
        base.submit(cell_id, command)
        return True

    def _warm(self, zygote, route):
        """Whether `zygote` can fork this route's cell warm: a compile forked from a zygote
        made before the server's warm-up would initialise every backend again, 0.5 s per cell.
        Such a zygote warms up once, itself."""
        if zygote.warm or is_inspection(route):
            return True
        if self.warm_targets is None:
            return False
        zygote.warm_up(self.warm_targets)
        return True

    def _expect(self, key, route, command):
        """Notes the compile zygotes an inspection's cells will want (its route lists them)."""
        wanted = self.expected.setdefault(key, {})
        for expected in route.expects:
            wanted.setdefault(key_for(expected), (ForkRoute(kind="compile", zygote=expected.zygote,
                                                            kernel=expected.kernel, target=expected.target),
                                                  command))

    def _start_expected_early(self, key):
        """Where the inspections' zygote is forked from a base (the package's third-party imports:
        torch, transformers), the compile zygotes of its targets are forked from that base beside
        it, on the cores it leaves idle, once the base is ready (issue 43): a package whose import
        asks the driver needs them, and they would start only once the inspections' zygote had
        imported, one import after another. The base's size then says whether they fit; a
        package that turns out to ask nothing compiles from the first zygote ready."""
        zygote = self.by_key.get(key)
        if zygote is None or zygote.parent is None or not zygote.parent.ready:
            return
        room = self.jobs - sum(1 for z in self.by_key.values() if z.usable)  # one a core at most
        for compile_key, (route, command) in list(self.expected.get(key, {}).items())[:max(0, room)]:
            # Only into memory that is free: never at the cost of a zygote that serves now.
            if compile_key in self.by_key or compile_key in self.unusable or not self._fits_one_more():
                continue
            if self._start_package(compile_key, route, command) is None:
                return

    def _start_expected(self, key):
        """The inspections' zygote of a package that asks the driver at import is ready: each
        target needs its own import, so those start now, beside the other inspections, instead
        of once the first compiles wait for them."""
        for compile_key, (route, command) in self.expected.pop(key, {}).items():
            if compile_key not in self.by_key and compile_key not in self.unusable:
                if self._start_package(compile_key, route, command) is None:
                    return

    def warm_all(self, targets):
        """The server is warming up: the zygotes made before it do the same, at the same time,
        so that they can fork compiles of every target (and a base's package zygotes inherit it)."""
        self.warm_targets = targets
        for zygote in self._all():
            if zygote.ready and self._compiles(zygote) and not zygote.warm:
                zygote.warm_up(targets)  # the others once their import has ended (_on_ready)

    @staticmethod
    def _compiles(zygote):
        """Whether it will fork compiles: a package zygote of a target, or the inspections' one of
        a package that never asks the driver. Not a base: its warm-up would delay the package
        zygotes waiting for it, which warm up themselves, each on its own core."""
        return zygote.role == "package" and (zygote.spec.target is not None or zygote.driver_free)

    # --- starting zygotes ----------------------------------------------------------------------
    def _deadline_s(self, command):
        timeout_s = (command.timeout_ms or 0) / 1000.0
        return min(_IMPORT_DEADLINE_S, timeout_s * _IMPORT_SHARE_OF_TIMEOUT) if timeout_s > 0 \
            else _IMPORT_DEADLINE_S

    def _data_limit(self, command):
        limit = self.rss_budget
        if command.max_rss_bytes:
            limit = min(limit, int(command.max_rss_bytes))
        return limit

    def _third_party(self, route):
        """(base key, the third-party imports its package's import begins with); (None, []) when
        it has none (import_scan.py)."""
        ref = kernel_ref(route)
        if ref is None:
            return None, []
        where = (ref.file, ref.module, ref.import_root, ref.pythonpath)  # all but the function
        if where not in self.scans:
            self.scans[where] = import_scan.third_party_imports(ref)
        modules = self.scans[where]
        if not modules:
            return None, []
        return repr((ref.import_root, list(ref.pythonpath or ()), modules)), modules

    def _base_key(self, route):
        return self._third_party(route)[0]

    def _start_base(self, route, command):
        """The base for this route's third-party imports, started if need be; None if it has
        none, or there is no room for one."""
        key, modules = self._third_party(route)
        if key is None:
            return None
        if key in self.bases:
            return self.bases[key]
        if not self._make_room():
            return None
        spec = ZygoteSpec(role="base", ref=kernel_ref(route), data_limit=self._data_limit(command),
                          third_party=tuple(ThirdPartyImport(name, tuple(names))
                                            for name, names in modules))
        base = Zygote(key, spec, None, self._deadline_s(command))
        self.bases[key] = base
        self._launch(base)
        return base

    def _start_package(self, key, route, command):
        base = self._start_base(route, command)
        if base is not None:
            base.last_used = time.monotonic()
        if not self._make_room(keep=base):
            return None
        # A module's inspection imports for no target; one that keys one target's cells imports
        # under that target's driver, as they do.
        spec = ZygoteSpec(role="package", ref=kernel_ref(route), target=route.target,
                          data_limit=self._data_limit(command))
        zygote = Zygote(key, spec, base if base is not None and base.usable else None,
                        self._deadline_s(command))
        self.by_key[key] = zygote
        if zygote.parent is not None and not zygote.parent.ready:
            zygote.parent.waiting_children.append(zygote)
        else:
            self._launch(zygote)
        return zygote

    def _launch(self, zygote):
        """Forks it from its base, or from the server when it has none."""
        ours, theirs = channel.pair()
        parent = zygote.parent
        if parent is not None and parent.ready:
            zygote.warm = parent.warm
            if not parent.send({"spawn": as_json(zygote.spec)}, fds=[theirs.fileno()]):
                parent = None  # the base is gone: its end of input says so; start from here
        else:
            parent = None
        if parent is None:
            zygote.parent = None
            zygote.warm = self.server_warm()
            zygote.pid = self._fork_zygote(zygote.spec, ours, theirs)
        theirs.close()
        zygote.sock = ours
        zygote.state = "importing"
        zygote.deadline = time.monotonic() + zygote.deadline_s
        self._tell("started", zygote)

    def _fork_zygote(self, spec, ours, theirs):
        freeze_heap()
        pid = os.fork()
        if pid == 0:
            own = [ours.fileno(), *self.server_fds(), *(z.sock.fileno() for z in self._all() if z.sock)]
            zygote_process.main(spec, theirs, self.server_pid, self.server_pid, close_fds=own)
        return pid

    def _tell(self, change, zygote, seconds=None):
        """The tool counts starts, unusable imports, retirements and import seconds."""
        event = {"event": "zygote", "change": change, "role": zygote.role}
        if seconds is not None:
            event["seconds"] = seconds
        self.send_event(event)

    # --- memory (zygote_memory.py decides) ----------------------------------------------------
    def _make_room(self, keep=None):
        """Before a new zygote: retires the idle zygotes zygote_memory.Room names. False when
        there is no room even so."""
        room = zygote_memory.Room([z for z in self._all() if z.usable], self.rss_budget)
        for zygote in room.to_retire(keep, self._has_children):
            self._retire(zygote)
        return room.fits()

    def _fits_one_more(self):
        """Whether another zygote of the largest size fits beside those alive, none retired."""
        return zygote_memory.Room([z for z in self._all() if z.usable], self.rss_budget).fits()

    def _has_children(self, base):
        return any(z.parent is base and z.state != "ended" for z in self._all())

    def _retire(self, zygote):
        if self.by_key.get(zygote.key) is zygote:
            del self.by_key[zygote.key]
        if self.bases.get(zygote.key) is zygote:
            del self.bases[zygote.key]
        zygote.retire()
        self.retired.append(zygote)
        self._tell("retired", zygote)

    def _all(self):
        return [*self.by_key.values(), *self.bases.values(), *self.retired]
