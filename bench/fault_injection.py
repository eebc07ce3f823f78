#!/usr/bin/env python3
"""Fault-injection suite (issue 14): every fault repeated, everything checked after each run.

    bench/fault_injection.py [--binary build/triton-portcheck] [--python .venv/bin/python]
                             [--runs 20] [--faults sigkill,sigint:3,...] [--quick] [--jobs 2]
                             [--out RELIABILITY.md]

Drives the real binary and real Triton compiles. Each repetition gets its own folder with its own
$TMPDIR, $HOME and $TRITON_PORTCHECK_HOME, and every process it starts carries a unique
PORTCHECK_FI_TAG in its environment (daemons also carry a unique token on their command line),
so the checks after each run are exact:
  processes left  live processes of the run (tag, token or the tool's session), after a 5 s grace;
  litter left     anything left in the repetition's $TMPDIR, and half-written `.tmp-` files next to
                  reports and cache entries;
  cells lost      cells the run (or, after a kill, the next cached run) should have reported and did not;
  wrong answers   cells whose status/kind/stage/fingerprint differ from a `--no-cache` run of the
                  same manifest, made once at the start; an invalid partial report counts here too;
  wrong exits     an exit code other than the one the fault must give.
Exit status 0 when every row is 0, 1 otherwise. Full-disk faults need root (tmpfs mounts); where a
mount is impossible the row says so and is skipped.
"""
import argparse
import errno
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TAG_VAR = "PORTCHECK_FI_TAG"
GRACE_S = 5.0
# Signals land at a random moment within this part of a cold run's measured wall time: runs
# vary on a shared machine, and a signal after the end tests nothing.
SIGNAL_WINDOW = 0.7
TOOL_TIMEOUT_S = 300

DEMO_ROWS = {  # four demo kernels: two fail (one per backend), so cached failures are compared too
    "axpy": ('signature = { x_ptr = "*fp32:16", y_ptr = "*fp32:16", out_ptr = "*fp32:16", n = "i32:16", '
             'a = "fp32" }\nconstants = { BLOCK = 1024 }'),
    "gamma_ratio": ('signature = { x_ptr = "*fp32:16", y_ptr = "*fp32:16", out_ptr = "*fp32:16", n = "i32:16" }\n'
                    'constants = { BLOCK = 1024 }'),
    "quantize_fp8": ('signature = { x_ptr = "*fp32:16", out_ptr = "*fp8e4nv:16", n = "i32:16", scale = "fp32" }\n'
                     'constants = { BLOCK = 1024 }'),
    "poll_flags": ('signature = { flag_ptr = "*i32:16", data_ptr = "*i32:16", out_ptr = "*i32:16", n = "i32:16" }\n'
                   'constants = { BLOCK = 256 }'),
}
TARGETS = ["cuda:80", "hip:gfx942"]

# Module-level faults of issue 14 item 1, each placed before a healthy kernel definition.
IMPORT_FAULTS = {
    "import-crash": ("import ctypes\nctypes.string_at(0)  # SIGSEGV at import\n", ("import-error", "SIGSEGV")),
    "import-hang": ("while True:\n    pass\n", ("timeout", "time limit")),
    "import-bomb": ("_ballast = bytearray(3 << 30)\nfor _i in range(0, len(_ballast), 4096):\n    _ballast[_i] = 1\n",
                    ("oom", "memory limit")),
    # Once its parent (the worker or fork server) is dead, the next kill(getppid()) would name the
    # tool, to which the process is re-parented: the cells' seccomp guard must refuse it.
    "kill-parent": ("import os as _os\nfor _ in range(100000):\n    _os.kill(_os.getppid(), 9)\n",
                    ("crash", "killed its parent")),
}
IMPORT_LIMITS = 'timeout = 5\nmax_rss = "512MiB"\n'

DAEMON_BODY = '''\
    import os  # local: Triton refuses globals that are plain functions or modules in a constexpr_function
    pid = os.fork()  # fork(); setsid(); fork(); exec sleep: a daemon that leaves our session
    if pid == 0:
        try:
            os.setsid()
            # Proof the fault ran, written here: the daemon itself may be swept by the tool (it
            # re-parents to it) before it writes anything, the more so with one import in all.
            open(os.path.join("{marker}", "daemon-%d" % os.getpid()), "w").close()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "{token}"])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
'''
DAEMONISE = "def _daemonise():\n" + DAEMON_BODY + "\n\n"
AXPY_BODY = '''\
    offs = tl.program_id(0) * {block} + tl.arange(0, {block})
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)
'''
HEALTHY_MODULE = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                  "def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):\n" + AXPY_BODY.format(block="BLOCK"))
DAEMON_AT_COMPILE = ("import triton\nimport triton.language as tl\n\n\n@triton.constexpr_function\n"
                     "def spawn_daemon(block):\n" + DAEMON_BODY + "    return block\n\n\n@triton.jit\n"
                     "def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):\n"
                     "    B: tl.constexpr = spawn_daemon(BLOCK)\n" + AXPY_BODY.format(block="B"))


# ============================================================================ processes and litter

def scan_processes():
    """pid -> (environ entries, cmdline, session, state) of every live process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        found[int(entry)] = (environ, cmdline, int(fields[3]), fields[0].decode())
    return found


def run_processes(tag, token=None, sessions=()):
    """(pid, cmdline) of live processes of one repetition: its tag, its daemon token, its sessions."""
    needle = f"{TAG_VAR}={tag}".encode()
    left = []
    for pid, (environ, cmdline, session, state) in scan_processes().items():
        if state == "Z" or pid == os.getpid():
            continue
        if needle in environ or (token and token in cmdline) or session in sessions:
            left.append((pid, cmdline))
    return left


def children_of(pid):
    tree, todo = [], [pid]
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parents.setdefault(int(f.read().rsplit(b")", 1)[1].split()[1]), []).append(int(entry))
            except OSError:
                pass
    while todo:
        for child in parents.get(todo.pop(), []):
            tree.append(child)
            todo.append(child)
    return tree


def cmdline_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def leftovers(tag, token=None, sessions=()):
    """Processes still alive GRACE_S after the run; each is then killed so the next run starts clean."""
    deadline = time.monotonic() + GRACE_S
    while True:
        left = run_processes(tag, token, sessions)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def temp_litter(*folders, ignore=()):
    """Leftover entries: everything in a $TMPDIR, and half-written `.tmp-` files anywhere below."""
    litter = []
    for folder, everything in folders:
        folder = Path(folder)
        if not folder.exists():
            continue
        if everything:
            litter += [p for p in folder.iterdir() if p.name not in (".filler", *ignore)]
        else:
            litter += [p for p in folder.rglob("*") if ".tmp-" in p.name]
    return litter


def litter_owner(path):
    name = Path(path).name
    if name.startswith("triton-portcheck-"):
        return "run folder"
    # Python tempfile names (tmp + 8 characters) of a cell killed mid-compile: Triton's CUDA
    # backend hands ptxas NamedTemporaryFile(delete=False) .ptx/.log files (and the .ptx.o it
    # writes), the AMD backend's are bare tmpXXXXXXXX (lld adds .tmpXXXXXXX beside its output),
    # the worker's cuobjdump input a .cubin. All go to the worker's inherited $TMPDIR.
    if re.fullmatch(r"tmp\w{8}(\..*)?", name) or name.startswith("tmpxft"):
        return "Triton/ptxas temp files, i14-c's fix"
    return "other"


# ============================================================================ one repetition

@dataclass
class Outcome:
    cells_lost: int = 0
    processes_left: int = 0
    litter_left: int = 0
    wrong_answers: int = 0
    wrong_exits: int = 0
    notes: list = field(default_factory=list)

    def add(self, other):
        for name in ("cells_lost", "processes_left", "litter_left", "wrong_answers", "wrong_exits"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.notes += other.notes


class Rep:
    """One repetition's folder, environment and tag."""

    def __init__(self, suite, name):
        self.suite = suite
        self.dir = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=suite.workdir))
        self.tag = f"fi-{uuid.uuid4().hex}"
        self.token = f"3600.{random.randrange(10**8, 10**9)}"  # `sleep` of this rep's daemons
        self.tmp = self.dir / "tmp"
        self.home = self.dir / "home"
        for d in (self.tmp, self.home, self.dir / "user"):
            d.mkdir()
        self.sessions = set()
        self.extra_litter = []  # further $TMPDIRs of the repetition's runs
        self.outcome = Outcome()

    def env(self, **extra):
        env = dict(os.environ)
        for name in ("TRITON_PORTCHECK_INJECT", "VIRTUAL_ENV", "PYTHONPATH", "TRITON_PORTCHECK_SHARE",
                     "XDG_CACHE_HOME"):
            env.pop(name, None)
        env.update(TMPDIR=str(self.tmp), HOME=str(self.dir / "user"), TRITON_PORTCHECK_HOME=str(self.home))
        env[TAG_VAR] = self.tag
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def start(self, args, name="run", jobs=None, **env_extra):
        out = open(self.dir / f"{name}.out", "w")
        err = open(self.dir / f"{name}.err", "w")
        cmd = [str(self.suite.binary), "check", "--manifest", str(self.dir / "portcheck.toml"), "--python",
               str(self.suite.python), "-j", str(jobs or self.suite.jobs), "-q", *map(str, args)]
        proc = subprocess.Popen(cmd, cwd=self.dir, env=self.env(**env_extra), stdout=out, stderr=err,
                                start_new_session=True)
        out.close()
        err.close()
        self.sessions.add(proc.pid)
        proc.started = time.monotonic()
        proc.name = name
        return proc

    def wait(self, proc):
        try:
            proc.wait(timeout=TOOL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.outcome.wrong_exits += 1
            self.outcome.notes.append(f"{proc.name} ran past {TOOL_TIMEOUT_S} s")
        return proc.returncode

    def stderr(self, name="run"):
        return (self.dir / f"{name}.err").read_text(errors="replace")

    def run(self, args, name="run", **env_extra):
        proc = self.start(args, name, **env_extra)
        return self.wait(proc)

    def expect_exit(self, rc, wanted, what):
        if rc not in wanted:
            self.outcome.wrong_exits += 1
            err = self.stderr(what).strip().splitlines()
            self.outcome.notes.append(f"{what}: exit {rc}, expected {'/'.join(map(str, wanted))}"
                                      f"{': ' + err[-1][:160] if err else ''}")

    def finish(self):
        """The checks common to every fault: no process, no litter. Called after the fault's run
        (before a re-run that might clean up after it) and after the repetition's last run; what
        it counts is then removed, so nothing is counted twice."""
        left = leftovers(self.tag, self.token, self.sessions)
        if left:
            self.outcome.processes_left += len(left)
            self.outcome.notes.append("left: " + "; ".join(c[:80] for _, c in left[:3]))
        litter = temp_litter((self.tmp, True), (self.home, False), (self.dir / "reports", False),
                             *[(folder, True) for folder in self.extra_litter])
        if litter:
            self.outcome.litter_left += len(litter)
            owners = sorted({litter_owner(p) for p in litter})
            self.outcome.notes.append(f"litter: {', '.join(owners)}")
            print(f"    litter: {', '.join(sorted(p.name for p in litter))}", flush=True)
            for path in litter:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        return self.outcome


def cell_answer(cell):
    return (cell.get("status"), cell.get("kind"), cell.get("stage"), cell.get("fingerprint"))


def load_report(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def compare_cells(rep, report, reference, what, complete=True):
    """Counts lost and wrong cells of `report` against the --no-cache reference."""
    if report is None:
        rep.outcome.cells_lost += len(reference) if complete else 0
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append(f"{what}: no valid JSON report")
        return
    seen = {}
    for cell in report.get("cells", []):
        position = (cell.get("row"), cell.get("target"))
        if position in seen or position not in reference:
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"{what}: unexpected or repeated cell {position}")
        seen[position] = cell
    for position, answer in reference.items():
        if position not in seen:
            if complete:
                rep.outcome.cells_lost += 1
                rep.outcome.notes.append(f"{what}: cell {position} missing")
        elif cell_answer(seen[position]) != answer:
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"{what}: {position} is {cell_answer(seen[position])}, --no-cache says {answer}")
    summary = report.get("summary", {})
    if summary.get("cells") != len(report.get("cells", [])):
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append(f"{what}: summary.cells {summary.get('cells')} != {len(report.get('cells', []))}")


def cached_answers_match(rep, manifest):
    """A run on the repetition's cache must give the --no-cache answers, every cell present."""
    ref = rep.suite.references[manifest]
    rc = rep.run(["--json", rep.dir / "after.json"], name="after")
    rep.expect_exit(rc, [ref.exit_code], "after")
    compare_cells(rep, load_report(rep.dir / "after.json"), ref.cells, "cached re-run")


# ============================================================================ manifests

def demo_manifest(folder, rows=DEMO_ROWS, extra_defaults="timeout = 120\n"):
    shutil.copy(REPO / "demo" / "kernels.py", folder / "kernels.py")
    text = "[defaults]\ntargets = [" + ", ".join(f'"{t}"' for t in TARGETS) + "]\n" + extra_defaults
    for name, body in rows.items():
        text += f'\n[[kernel]]\nname = "{name}"\ntarget = "kernels.py:{name}"\n{body}\noptions = {{ num_warps = 4 }}\n'
    (folder / "portcheck.toml").write_text(text)


def module_manifest(folder, module_text, limits="timeout = 120\n", token="3600"):
    """A healthy row (kernels.py:axpy) and the row under test (fault.py:axpy)."""
    (folder / "kernels.py").write_text(HEALTHY_MODULE)
    (folder / "daemons").mkdir()
    (folder / "fault.py").write_text(module_text.replace("{token}", token).replace("{marker}", str(folder / "daemons")))
    text = "[defaults]\ntargets = [" + ", ".join(f'"{t}"' for t in TARGETS) + "]\n" + limits
    for name, module in (("healthy", "kernels"), ("fault", "fault")):
        text += (f'\n[[kernel]]\nname = "{name}"\ntarget = "{module}.py:axpy"\n{DEMO_ROWS["axpy"]}\n'
                 "options = { num_warps = 4 }\n")
    (folder / "portcheck.toml").write_text(text)


MANIFESTS = {
    "demo": lambda folder, token: demo_manifest(folder),
    "demo-process": lambda folder, token: demo_manifest(folder),
    **{fault: (lambda folder, token, code=code: module_manifest(folder, code + HEALTHY_MODULE, IMPORT_LIMITS))
       for fault, (code, _) in IMPORT_FAULTS.items()},
    "daemon-import": lambda folder, token: module_manifest(folder, DAEMONISE + "_daemonise()\n\n" + HEALTHY_MODULE,
                                                          token=token),
    "daemon-compile": lambda folder, token: module_manifest(folder, DAEMON_AT_COMPILE, token=token),
    "daemon-empty-env": lambda folder, token: module_manifest(folder, DAEMON_EMPTY_ENV, token=token),
}


REFERENCE_ARGS = {"demo-process": ["--isolation", "process"]}  # the fault's runs use them too


@dataclass
class Reference:
    exit_code: int
    cells: dict
    wall_s: float


# ============================================================================ the faults

def random_signal(rep, sig, process_group, manifest="demo"):
    """Runs the demo manifest on a cold cache and sends `sig` after a random part of its duration."""
    ref = rep.suite.references[manifest]
    delay = random.uniform(0, SIGNAL_WINDOW * ref.wall_s)
    proc = rep.start(["--json", rep.dir / "reports" / "report.json", *REFERENCE_ARGS.get(manifest, [])])
    try:
        proc.wait(timeout=delay)
        rep.outcome.notes.append(f"finished before the signal ({delay:.1f} s)")
    except subprocess.TimeoutExpired:
        try:
            if process_group:  # Ctrl-C in a terminal signals the whole foreground process group
                os.killpg(proc.pid, sig)
            else:
                os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass  # it ended just now
        sent = time.monotonic()
        rep.wait(proc)
        if time.monotonic() - sent > 5:  # Ctrl-C must always work, and at once
            rep.outcome.wrong_exits += 1
            rep.outcome.notes.append(f"exited {time.monotonic() - sent:.1f} s after the signal")
    return proc, rep.wait(proc)


def fault_sigkill(manifest):
    def fault(rep):
        (rep.dir / "reports").mkdir()
        proc, rc = random_signal(rep, signal.SIGKILL, process_group=False, manifest=manifest)
        rep.expect_exit(rc, [-signal.SIGKILL, rep.suite.references[manifest].exit_code], "run")
        rep.finish()  # before the re-run, which would clean up after us
        cached_answers_match(rep, manifest)  # in fork isolation, whatever wrote the entries

    return fault


def fault_sigint(rep):
    (rep.dir / "reports").mkdir()
    ref = rep.suite.references["demo"]
    proc, rc = random_signal(rep, signal.SIGINT, process_group=True)
    interrupted = rc == 130
    rep.expect_exit(rc, [130, ref.exit_code], "run")
    report = load_report(rep.dir / "reports" / "report.json")
    compare_cells(rep, report, ref.cells, "partial report", complete=not interrupted)
    if report is not None and report.get("interrupted") is not interrupted:
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append(f"report says interrupted={report.get('interrupted')}, exit {rc}")
    rep.finish()
    cached_answers_match(rep, "demo")


def fault_fork_server(rep):
    """Kills the fork server (found in the tool's process tree) at a random moment of the run."""
    (rep.dir / "reports").mkdir()
    ref = rep.suite.references["demo"]
    delay = random.uniform(0, SIGNAL_WINDOW * ref.wall_s)
    proc = rep.start(["--json", rep.dir / "reports" / "report.json"])
    killed = False
    while proc.poll() is None and not killed:
        if time.monotonic() - proc.started >= delay:
            for pid in children_of(proc.pid):
                if "portcheck_worker serve" in cmdline_of(pid):
                    os.kill(pid, signal.SIGKILL)
                    killed = True
                    break
        time.sleep(0.02)
    if not killed:
        rep.outcome.notes.append("finished before the server was killed")
    rep.expect_exit(rep.wait(proc), [ref.exit_code], "run")
    compare_cells(rep, load_report(rep.dir / "reports" / "report.json"), ref.cells, "run")
    rep.finish()
    cached_answers_match(rep, "demo")


def fault_module(manifest):
    """A module fault: that row's own red cells (checked against the verdict the issue requires),
    every other cell as --no-cache says, on a cold cache and then on the warm one."""

    def fault(rep):
        ref = rep.suite.references[manifest]
        (rep.dir / "reports").mkdir()
        rc = rep.run(["--json", rep.dir / "reports" / "report.json"])
        rep.expect_exit(rc, [ref.exit_code], "run")
        compare_cells(rep, load_report(rep.dir / "reports" / "report.json"), ref.cells, "run")
        rep.finish()
        if manifest.startswith("daemon") and not any((rep.dir / "daemons").iterdir()):
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append("no daemon was started: the fault did not happen")
        cached_answers_match(rep, manifest)

    return fault


def expected_verdicts(manifest, reference):
    """The issue's required verdicts; the reference itself must show them or the suite stops."""
    for (row, target), (status, kind, stage, _) in reference.cells.items():
        if manifest in IMPORT_FAULTS and row == "fault":
            wanted = ("failed", IMPORT_FAULTS[manifest][1][0], "import")
            if (status, kind, stage) != wanted:
                return f"{row} on {target} is {(status, kind, stage)}, the issue requires {wanted}"
        elif not manifest.startswith("demo") and status != "ok":
            return f"{row} on {target} is {(status, kind, stage)}, expected ok"
    wanted_exit = 1 if manifest in IMPORT_FAULTS or manifest.startswith("demo") else 0
    if reference.exit_code != wanted_exit:
        return f"--no-cache exit {reference.exit_code}, expected {wanted_exit}"
    return None


class FullDisk:
    """A tiny tmpfs mounted on `folder`, filled to the last byte so the next write fails ENOSPC."""

    def __init__(self, folder, size="256k"):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.size = size

    def __enter__(self):
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size},mode=1777", "tmpfs", str(self.folder)],
                       check=True, capture_output=True)
        fd = os.open(self.folder / ".filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc):
        if subprocess.run(["umount", str(self.folder)], capture_output=True).returncode != 0:
            time.sleep(1)
            subprocess.run(["umount", "-l", str(self.folder)], capture_output=True)


def mount_problem():
    """Why tmpfs mounts are impossible here, or None."""
    if os.geteuid() != 0:
        return "needs root for tmpfs mounts"
    probe = Path(tempfile.mkdtemp(prefix="mount-probe-"))
    try:
        with FullDisk(probe, "16k"):
            pass
    except (subprocess.CalledProcessError, OSError) as e:
        return f"mount -t tmpfs failed: {getattr(e, 'stderr', b'') or e}".strip()
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return None


def warm_home(rep):
    shutil.rmtree(rep.home)
    shutil.copytree(rep.suite.warm_home, rep.home)


def fault_full_reports(rep):
    """The report's disk is full: exit 3 with one line, the matrix still printed, nothing half-written."""
    demo_manifest(rep.dir)
    warm_home(rep)
    reports = rep.dir / "reports"
    with FullDisk(reports):
        rc = rep.run(["--json", reports / "report.json", "--junit", reports / "report.xml"])
        rep.expect_exit(rc, [3], "run")
        err = rep.stderr().strip().splitlines()  # one line per report that could not be written
        if len(err) != 2 or not all("No space left" in line for line in err):
            rep.outcome.wrong_exits += 1
            rep.outcome.notes.append(f"stderr is not one line naming the full disk: {err[:2]}")
        written = [p.name for p in reports.iterdir() if p.name != ".filler"]
        if written:
            rep.outcome.litter_left += len(written)
            rep.outcome.notes.append(f"half-written in the full folder: {written}")
        out = (rep.dir / "run.out").read_text()
        lost = [row for row in DEMO_ROWS if not any(line.startswith(row + " ") for line in out.splitlines())]
        rep.outcome.cells_lost += len(lost) * len(TARGETS)
    rep.finish()


def fault_full_cache(rep):
    """The cache's disk is full: the run is right all the same, and so is the next one."""
    ref = rep.suite.references["demo"]
    (rep.dir / "reports").mkdir()
    with FullDisk(rep.home):
        rc = rep.run(["--json", rep.dir / "reports" / "report.json"])
        rep.expect_exit(rc, [ref.exit_code], "run")
        compare_cells(rep, load_report(rep.dir / "reports" / "report.json"), ref.cells, "run")
        cached_answers_match(rep, "demo")
        rep.finish()


def fault_full_tmpdir(rep):
    """$TMPDIR is full: exit 3 (an environment problem) with one line; no folder left in it."""
    warm_home(rep)
    with FullDisk(rep.tmp):
        rc = rep.run(["--json", rep.dir / "report.json"])
        rep.expect_exit(rc, [3], "run")
        rep.finish()
    # .filler is ours: do not count it (the mount is gone now, so $TMPDIR is the empty mount point)


def fault_concurrent(count):
    def fault(rep):
        ref = rep.suite.references["demo"]
        (rep.dir / "reports").mkdir()
        procs = []
        for i in range(count):  # one cache, each run its own $TMPDIR as separate shells would have
            tmp = rep.dir / f"tmp{i}"
            tmp.mkdir()
            rep.extra_litter.append(tmp)
            procs.append((rep.start(["--json", rep.dir / "reports" / f"r{i}.json"], name=f"run{i}", jobs=1,
                                    TMPDIR=tmp), tmp))
        reports = []
        for i, (proc, tmp) in enumerate(procs):
            rep.expect_exit(rep.wait(proc), [ref.exit_code], f"run{i}")
            reports.append(load_report(rep.dir / "reports" / f"r{i}.json"))
            compare_cells(rep, reports[-1], ref.cells, f"run{i}")
        answers = [sorted((c["row"], c["target"], cell_answer(c)) for c in r["cells"]) for r in reports if r]
        if any(a != answers[0] for a in answers):
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append("concurrent reports differ")
        rep.finish()
        cached_answers_match(rep, "demo")

    return fault


def damage(text, how, rng):
    """Returns (damaged text, whether the cache must name it as damaged rather than a silent miss)."""
    if how == "flip":
        data = bytearray(text.encode())
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
        text = data.decode(errors="surrogateescape")
    elif how == "truncate":
        text = text[:rng.randrange(len(text))]
    else:
        entry = json.loads(text)
        fields = [("result", name) for name in entry["result"]] + [(None, name) for name in entry
                                                                   if name not in ("schema", "checksum")]
        parent, name = rng.choice(fields)
        target = entry[parent] if parent else entry
        if how == "delete":
            del target[name]
        else:  # change the type: text for a number, a number for anything else
            target[name] = "x" if isinstance(target[name], (int, float)) else 5
        text = json.dumps(entry)
    try:
        entry = json.loads(text)
    except ValueError:
        return text, True
    silent = isinstance(entry, dict) and (("schema" in entry and entry["schema"] != 2) or
                                          ("schema" not in entry and "checksum" not in entry))
    return text, not silent


DAMAGES = ["flip", "type", "delete", "truncate"]


def fault_damaged_cache(rep):
    """Damaged entries: every answer as --no-cache says, each damaged entry a miss, the damage named."""
    ref = rep.suite.references["demo"]
    demo_manifest(rep.dir)
    warm_home(rep)
    entries = sorted((rep.home / "cache" / "results").glob("*/*.json"))
    rng = random.Random()
    chosen = rng.sample(entries, rng.randint(1, len(entries)))
    kinds = [DAMAGES[rep.index % len(DAMAGES)]] + [rng.choice(DAMAGES) for _ in chosen[1:]]
    must_name = False
    for path, how in zip(chosen, kinds):
        text, named = damage(path.read_text(), how, rng)
        path.write_bytes(text.encode(errors="surrogateescape"))
        must_name = must_name or named
    rep.outcome.notes += [f"damaged by {how}" for how in kinds]
    (rep.dir / "reports").mkdir()
    rc = rep.run(["--json", rep.dir / "reports" / "report.json"])
    rep.expect_exit(rc, [ref.exit_code], "run")
    report = load_report(rep.dir / "reports" / "report.json")
    compare_cells(rep, report, ref.cells, "run")
    if report:
        misses = sum(not c["cached"] for c in report["cells"])
        if misses != len(chosen):
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"{misses} misses for {len(chosen)} damaged entries")
    if must_name and "damaged cache entry" not in rep.stderr():
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append("damage not reported")
    rep.finish()
    cached_answers_match(rep, "demo")  # the damaged entries were replaced by good ones
    after = load_report(rep.dir / "after.json")
    if after and not all(c["cached"] for c in after["cells"]):
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append("damaged entries not replaced")


# ============================================================================ issue 28's faults

sys.path.insert(0, str(REPO / "bench"))
from hostile_redis import HostileRedis  # noqa: E402
from remote_servers import RedisServer, WebDavServer, resealed  # noqa: E402


FORGERIES = [  # wrong inner types under a good checksum, as the hardening round found them
    lambda r: r.update(error={"type": ["x"], "message": ["a", "b"], "traceback": ["c"]}),
    lambda r: r.update(error={}),
    lambda r: r.update(error={"kind": 17}),
    lambda r: r.update(stages=["frontend"]),
    lambda r: r.update(compile_s="fast"),
    lambda r: r.update(source={"file": 3, "line": "x"}),
]


def fault_forged_remote(kind):
    def fault(rep):
        ref = rep.suite.references["demo"]
        (rep.dir / "reports").mkdir()
        with (RedisServer if kind == "redis" else WebDavServer)(rep.dir) as server:
            rep.expect_exit(rep.run(["--cache-url", server.url], name="fill"), [ref.exit_code], "fill")
            rng = random.Random()
            entries = server.entries()
            for name, text in entries:
                entry = json.loads(text)
                rng.choice(FORGERIES)(entry["result"])
                server.put(name, resealed(entry))
            shutil.rmtree(rep.home)  # an empty local cache asks the store for everything
            rep.home.mkdir()
            rc = rep.run(["--cache-url", server.url, "--json", rep.dir / "reports" / "report.json"])
        rep.expect_exit(rc, [ref.exit_code], "run")
        report = load_report(rep.dir / "reports" / "report.json")
        compare_cells(rep, report, ref.cells, "run")
        remote = (report or {}).get("environment", {}).get("remote_cache") or {}
        if "checksum does not match" in rep.stderr():
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append("a forgery was refused for its checksum: the suite sealed it wrong")
        if remote.get("remote_rejected") != len(entries) or remote.get("remote_hits"):
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"{len(entries)} forged entries, {remote.get('remote_rejected')} refused, "
                                     f"{remote.get('remote_hits')} served")
        rep.finish()
        cached_answers_match(rep, "demo")  # no store now: the local cache holds no forgery

    return fault


def fault_hostile_redis(mode, timeout_s=2):
    def fault(rep):
        ref = rep.suite.references["demo"]
        (rep.dir / "reports").mkdir()
        # Drips alternate between the replies to reads and those to writes.
        store = HostileRedis(["drip-reads", "drip-writes"][rep.index % 2] if mode == "drip" else mode)
        started = time.monotonic()
        proc = rep.start(["--cache-url", store.url, "--cache-timeout", str(timeout_s), "--json",
                          rep.dir / "reports" / "report.json"])
        peak_kib = 0
        while proc.poll() is None:
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
                peak_kib = max(peak_kib, int(status.split("VmHWM:")[1].split()[0]))
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(0.05)
        rc = rep.wait(proc)
        store.stop()
        rep.expect_exit(rc, [ref.exit_code], "run")
        report = load_report(rep.dir / "reports" / "report.json")
        compare_cells(rep, report, ref.cells, "run")
        remote = (report or {}).get("environment", {}).get("remote_cache") or {}
        waited = remote.get("remote_read_seconds", 0) + remote.get("remote_write_seconds", 0)
        if waited > timeout_s + 1.5:
            rep.outcome.wrong_exits += 1
            rep.outcome.notes.append(f"waited {waited:.1f} s on the store with --cache-timeout {timeout_s}")
        if peak_kib > 512 * 1024:
            rep.outcome.wrong_exits += 1
            rep.outcome.notes.append(f"peak RSS {peak_kib >> 10} MiB")
        rep.outcome.notes.append(f"{time.monotonic() - started:.0f} s a run")
        rep.finish()

    return fault


def fault_missing_shard(rep):
    """One shard's report lost: merge refuses (exit 2, naming it) and writes nothing; with
    --allow-missing-shards the merge exits 1 and lists it; every cell the shards hold is right."""
    ref = rep.suite.references["demo"]
    (rep.dir / "reports").mkdir()
    parts = {}
    for k in (1, 2):
        parts[k] = rep.dir / "reports" / f"s{k}.json"
        rep.expect_exit(rep.run(["--shard", f"{k}/2", "--json", parts[k]], name=f"shard{k}"), [0, 1], f"shard{k}")
    lost = random.choice([1, 2])
    kept = parts[3 - lost]
    merged = rep.dir / "reports" / "merged.json"
    for name, extra, wanted in (("merge", [], 2), ("merge-allowed", ["--allow-missing-shards"], 1)):
        run = subprocess.run([str(rep.suite.binary), "merge", str(kept), "-o", str(merged), *extra], cwd=rep.dir,
                             env=rep.env(), capture_output=True, text=True, timeout=60)
        (rep.dir / f"{name}.err").write_text(run.stderr)
        rep.expect_exit(run.returncode, [wanted], name)
        if wanted == 2:
            if merged.exists() or f"shard {lost}/2 missing" not in run.stderr:
                rep.outcome.wrong_answers += 1
                rep.outcome.notes.append("merge of an incomplete set wrote a report or did not name the shard")
            continue
        report = load_report(merged)
        compare_cells(rep, report, ref.cells, "merged", complete=False)
        if (report or {}).get("missing_shards") != [f"{lost}/2"]:
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"missing_shards {(report or {}).get('missing_shards')}")
    rep.finish()


# A daemon whose `sleep` clears its environment: no marker finds it. Its session's leader stays
# alive (and keeps the marker), so the run's own sweep of processes re-parented to the tool cannot
# get to the `sleep` first; the compile then waits, so that the kill lands while the run is on.
DAEMON_EMPTY_ENV = ("import triton\nimport triton.language as tl\n\n\n@triton.constexpr_function\n"
                    "def spawn_daemon(block):\n"
                    "    import os\n    import time\n"
                    "    if os.fork() == 0:\n"
                    "        os.setsid()\n"
                    "        open(os.path.join(\"{marker}\", \"daemon-%d\" % os.getpid()), \"w\").close()\n"
                    "        if os.fork() == 0:\n"
                    "            os.execve(\"/bin/sleep\", [\"sleep\", \"{token}\"], {})\n"
                    "        time.sleep(120)\n"
                    "        os._exit(0)\n"
                    "    time.sleep(5)\n"
                    "    return block\n\n\n@triton.jit\n"
                    "def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):\n"
                    "    B: tl.constexpr = spawn_daemon(BLOCK)\n" + AXPY_BODY.format(block="B"))
assert DAEMON_EMPTY_ENV != DAEMON_AT_COMPILE


def fault_daemon_empty_env(rep):
    """A daemon that clears its environment at compile, then SIGKILL of the tool: nothing that
    carries the run's marker is left to find it by; the run's cgroup must."""
    (rep.dir / "reports").mkdir()
    proc = rep.start(["--no-cache", "--json", rep.dir / "reports" / "report.json"])
    deadline = time.monotonic() + 60
    while not any((rep.dir / "daemons").iterdir()) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(random.uniform(0, 0.5))
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        rep.outcome.notes.append("finished before the kill")
    rep.expect_exit(rep.wait(proc), [-signal.SIGKILL, 0], "run")
    if not any((rep.dir / "daemons").iterdir()):
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append("no daemon was started: the fault did not happen")
    rep.finish()  # its token is on the daemon's command line: a survivor is counted


SABOTAGE = {  # user code that breaks the runtime: one verdict, whatever the isolation
    "builtins.open = None": "import builtins\nbuiltins.open = None\n",
    "json.dumps = None": "import json\njson.dumps = None\n",
    "urandom over fds 3 and 4": "import os\n_fd = os.open('/dev/urandom', os.O_RDONLY)\nos.dup2(_fd, 3)\n"
                                "os.dup2(_fd, 4)\n",
}


def fault_sabotage(rep):
    """Each sabotage in turn: --isolation fork and process give the same cells (the fault row an
    import-error or, for the descriptors, ok; the healthy row ok)."""
    name = list(SABOTAGE)[rep.index % len(SABOTAGE)]
    module_manifest(rep.dir, SABOTAGE[name] + HEALTHY_MODULE)
    rep.outcome.notes.append(name)
    answers = {}
    for isolation in ("fork", "process"):
        out = rep.dir / f"{isolation}.json"
        rc = rep.run(["--no-cache", "--isolation", isolation, "--json", out], name=isolation)
        rep.expect_exit(rc, [0, 1], isolation)
        report = load_report(out)
        answers[isolation] = {(c["row"], c["target"]): cell_answer(c) for c in (report or {}).get("cells", [])}
    expected_kind = None if "fds" in name else "import-error"
    for isolation, cells in answers.items():
        for (row, target), (status, kind, _, _) in cells.items():
            wanted = expected_kind if row == "fault" else None
            if kind != wanted:
                rep.outcome.wrong_answers += 1
                rep.outcome.notes.append(f"{isolation}: {row} on {target} is {kind}, expected {wanted}")
    if answers["fork"] != answers["process"] or len(answers["fork"]) != 4:
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append("the isolation modes disagree")
    rep.finish()


class CpuAndMemoryLoad:
    """A spinning process per core and one rewriting 1 GiB over and over, for at most `seconds`
    (none for 0)."""

    def __init__(self, seconds):
        spin = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
        churn = (f"import time\nend = time.time() + {seconds}\nb = bytearray(1 << 30)\n"
                 "while time.time() < end:\n    for i in range(0, len(b), 4096):\n        b[i] = (b[i] + 1) & 255\n")
        self.procs = [subprocess.Popen([sys.executable, "-c", code])
                      for code in ([spin] * (os.cpu_count() or 2) + [churn] if seconds else [])]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()


def fork_and_process(rep, *args, load_s=0, **env):
    """The cells of a --no-cache run with each isolation, by position; notes a disagreement. With
    `load_s`, the fork run has a CPU and memory load beside it; the process run, the reference, has
    not (a fresh interpreter's start is slow on a loaded machine: that would only test the
    reference's own margin)."""
    answers = {}
    for isolation in ("fork", "process"):
        out = rep.dir / f"{isolation}.json"
        with CpuAndMemoryLoad(load_s if isolation == "fork" else 0):
            rc = rep.run(["--no-cache", "--isolation", isolation, "--json", out, *args], name=isolation, **env)
        rep.expect_exit(rc, [0, 1], isolation)
        answers[isolation] = {(c["row"], c["target"]): c for c in (load_report(out) or {}).get("cells", [])}
    fork, process = ({k: cell_answer(c) for k, c in answers[i].items()} for i in ("fork", "process"))
    if fork != process or len(fork) != 2 * len(TARGETS):
        rep.outcome.wrong_answers += 1
        rep.outcome.notes.append(f"the isolation modes disagree: fork {sorted(fork.items())}, process {sorted(process.items())}")
    return answers


def expect_kinds(rep, answers, fault_kind):
    for isolation, cells in answers.items():
        for (row, target), cell in cells.items():
            wanted = fault_kind if row == "fault" else None
            if cell.get("kind") != wanted:
                rep.outcome.wrong_answers += 1
                rep.outcome.notes.append(f"{isolation}: {row} on {target} is {cell.get('kind')}, expected {wanted}")


AT_IMPORT_FOR_FORKS = {  # issue 42 item 8: what an import leaves for the forks after it
    "after_in_child os._exit(0)": "import os\nos.register_at_fork(after_in_child=lambda: os._exit(0))\n",
    "before os._exit(0)": "import os\nos.register_at_fork(before=lambda: os._exit(0))\n",
    "fds 0-2 closed": "import os\nfor _fd in (0, 1, 2):\n    os.close(_fd)\n",
}


def fault_at_import_for_forks(rep):
    """Each in turn: the fault row is ok under --isolation fork as under process."""
    name = list(AT_IMPORT_FOR_FORKS)[rep.index % len(AT_IMPORT_FOR_FORKS)]
    module_manifest(rep.dir, AT_IMPORT_FOR_FORKS[name] + HEALTHY_MODULE)
    rep.outcome.notes.append(name)
    expect_kinds(rep, fork_and_process(rep), None)
    rep.finish()


# Issue 42 item 9: a third-party dependency (on PYTHONPATH) that asks Triton's driver at import and
# is slow to import (0.3 s of CPU, 11.2 s of waiting, as torch's when memory pressure has evicted
# its libraries), under CPU and memory load: the zygotes give its import up (5 s, a quarter of the
# 20 s limit) and the inspection imports it itself, as a fresh process does.
SLOW_DRIVER_DEPENDENCY = ("import time\nfrom triton.runtime import driver\ntry:\n"
                          "    TARGET = driver.active.get_current_target()\nexcept Exception:\n    TARGET = None\n"
                          "_until = time.process_time() + 0.3\nwhile time.process_time() < _until:\n    pass\n"
                          "time.sleep(11.2)\n")


def fault_loaded_zygotes(rep):
    deps = rep.dir / "deps"
    deps.mkdir()
    (deps / "slowdep.py").write_text(SLOW_DRIVER_DEPENDENCY)
    module_manifest(rep.dir, "import slowdep  # noqa: F401\n" + HEALTHY_MODULE, limits="timeout = 20\n")
    answers = fork_and_process(rep, "--static-only", load_s=120, PYTHONPATH=deps)
    for isolation, cells in answers.items():
        for (row, target), cell in cells.items():
            if cell.get("kind") is not None:
                rep.outcome.wrong_answers += 1
                rep.outcome.notes.append(f"{isolation}: {row} on {target} is {cell.get('kind')} in stage {cell.get('stage')}")
    rep.finish()


# Issue 42 item 10: a kernel that computes for ever at compile time, in a module that leaves a
# thread at import (its zygote forks with two threads): a real timeout, run once.
SPIN_AT_COMPILE = ("import threading\nimport time\nimport triton\nimport triton.language as tl\n\n"
                   "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n\n\n"
                   "@triton.constexpr_function\ndef spin(block):\n    while True:\n        pass\n\n\n"
                   "@triton.jit\ndef axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):\n"
                   "    B: tl.constexpr = spin(BLOCK)\n" + AXPY_BODY.format(block="B"))
SPIN_LIMIT_S = 4


def fault_spin_timeout(rep):
    module_manifest(rep.dir, SPIN_AT_COMPILE, limits=f"timeout = {SPIN_LIMIT_S}\n")
    answers = fork_and_process(rep)
    expect_kinds(rep, answers, "timeout")
    for (row, target), cell in answers["fork"].items():
        if row != "fault":
            continue
        own_s = cell.get("wall_s", 0) - cell.get("waited_s", 0)
        if cell.get("rerun_fresh") or own_s > SPIN_LIMIT_S * 1.5:
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"fork: {target} run again ({cell.get('rerun_fresh')}) or {own_s:.1f} s")
        else:
            process = answers["process"].get((row, target), {})
            rep.outcome.notes.append(f"{target}: fork {own_s:.1f} s, process {process.get('wall_s', 0):.1f} s")
    rep.finish()


# name -> (manifest, function, needs a tmpfs mount, what it does)
FAULTS = {
    "sigkill": ("demo", fault_sigkill("demo"), False, "SIGKILL of the tool at a random moment"),
    "sigkill-process": ("demo-process", fault_sigkill("demo-process"), False,
                        "the same with --isolation process (a fresh interpreter per cell)"),
    "sigint": ("demo", fault_sigint, False, "SIGINT (Ctrl-C, to the process group) at a random moment"),
    "fork-server": ("demo", fault_fork_server, False, "fork server SIGKILLed at a random moment"),
    "import-crash": ("import-crash", fault_module("import-crash"), False, "segfault at import (ctypes)"),
    "import-hang": ("import-hang", fault_module("import-hang"), False, "`while True` at import, timeout 5 s"),
    "import-bomb": ("import-bomb", fault_module("import-bomb"), False, "3 GiB at import, max_rss 512MiB"),
    "kill-parent": ("kill-parent", fault_module("kill-parent"), False,
                    "`kill(getppid(), SIGKILL)` in a loop at import"),
    "daemon-import": ("daemon-import", fault_module("daemon-import"), False,
                      "fork; setsid; fork; exec sleep at import"),
    "daemon-compile": ("daemon-compile", fault_module("daemon-compile"), False,
                       "the same in a constexpr_function run at compile"),
    "full-reports": ("demo", fault_full_reports, True, "--json/--junit on a full tmpfs"),
    "full-cache": ("demo", fault_full_cache, True, "$TRITON_PORTCHECK_HOME on a full tmpfs"),
    "full-tmpdir": ("demo", fault_full_tmpdir, True, "$TMPDIR on a full tmpfs"),
    "concurrent-2": ("demo", fault_concurrent(2), False, "2 runs at once on one cold cache, -j 1 each"),
    "concurrent-4": ("demo", fault_concurrent(4), False, "4 runs at once on one cold cache, -j 1 each"),
    "damaged-cache": ("demo", fault_damaged_cache, False, "flipped bits, changed types, deleted fields, truncated"),
    "forged-redis": ("demo", fault_forged_remote("redis"), False,
                     "Redis entries sealed again around wrong inner types, local cache empty"),
    "forged-http": ("demo", fault_forged_remote("http"), False, "the same on an HTTP (WebDAV) store"),
    "slow-redis": ("demo", fault_hostile_redis("drip"), False,
                   "a Redis that sends a byte of its replies to reads (or writes) every 1.9 s, --cache-timeout 2"),
    "huge-redis": ("demo", fault_hostile_redis("huge"), False, "a Redis that answers MGET with a 1 GiB value"),
    "missing-shard": ("demo", fault_missing_shard, False, "one of two shard reports lost before merge"),
    "daemon-empty-env": ("daemon-empty-env", fault_daemon_empty_env, False,
                         "fork; setsid; fork; execve(sleep, {} environment) at compile, then SIGKILL of the tool"),
    "sabotage": ("demo", fault_sabotage, False,
                 "builtins.open = None, json.dumps = None, urandom over fds 3 and 4 at import; fork vs process"),
    "at-fork-import": ("demo", fault_at_import_for_forks, False,
                       "an at-fork handler that exits the child or the parent, or fds 0-2 closed, at import; "
                       "fork vs process"),
    "loaded-zygotes": ("demo", fault_loaded_zygotes, False,
                       "a dependency that asks the driver at import and waits 11 s there, a CPU and memory "
                       "load beside, timeout 20 s, --static-only; fork (loaded) vs process"),
    "spin-timeout": ("demo", fault_spin_timeout, False,
                     "a compile that computes for ever in a cell from a threaded zygote, timeout 4 s: one "
                     "attempt; fork vs process"),
}


# ============================================================================ the suite

class Suite:
    def __init__(self, args):
        self.binary = Path(args.binary).resolve()
        # Runs start in their own folders: a relative interpreter path is made absolute here
        # (not resolved: a venv's python is a symlink that must stay one).
        self.python = Path(args.python).absolute() if "/" in args.python else Path(args.python)
        self.jobs = args.jobs
        self.workdir = Path(tempfile.mkdtemp(prefix="portcheck-faults-"))
        self.references = {}
        self.warm_home = None

    def reference(self, manifest):
        """The --no-cache answers for one manifest, and its wall time (the window for random signals)."""
        rep = Rep(self, f"reference-{manifest}")
        MANIFESTS[manifest](rep.dir, rep.token)
        started = time.monotonic()
        rc = rep.run(["--no-cache", "--json", rep.dir / "ref.json", *REFERENCE_ARGS.get(manifest, [])])
        wall = time.monotonic() - started
        report = load_report(rep.dir / "ref.json")
        if report is None:
            raise SystemExit(f"reference run of {manifest} wrote no report (exit {rc}):\n{rep.stderr()}")
        ref = Reference(rc, {(c["row"], c["target"]): cell_answer(c) for c in report["cells"]}, wall)
        problem = expected_verdicts(manifest, ref)
        if problem:
            raise SystemExit(f"the --no-cache run of {manifest} is already wrong: {problem}")
        leftovers(rep.tag, rep.token, rep.sessions)
        if manifest == "demo":  # a warm cache, copied into the repetitions that start warm
            rep.run(["--json", rep.dir / "warm.json"], name="warm")
            self.warm_home = rep.home
        self.references[manifest] = ref
        return ref


def run_fault(suite, name, runs):
    manifest, function, needs_mount, _ = FAULTS[name]
    if manifest not in suite.references:
        suite.reference(manifest)
    total = Outcome()
    started = time.monotonic()
    for i in range(runs):
        rep = Rep(suite, name)
        rep.index = i
        if name not in ("full-reports", "damaged-cache"):
            MANIFESTS[manifest](rep.dir, rep.token)
        try:
            function(rep)
        except Exception as e:  # a crash of the suite is a finding too, never a silent pass
            rep.outcome.wrong_answers += 1
            rep.outcome.notes.append(f"suite error: {type(e).__name__}: {e}")
        rep.finish()  # after the repetition's last run
        total.add(rep.outcome)
        flags = [k for k in ("cells_lost", "processes_left", "litter_left", "wrong_answers", "wrong_exits")
                 if getattr(rep.outcome, k)]
        print(f"  {name} {i + 1}/{runs}: {'OK' if not flags else 'FAIL ' + ', '.join(flags)}"
              f"{' - ' + '; '.join(rep.outcome.notes) if rep.outcome.notes else ''}", flush=True)
        if not flags:
            shutil.rmtree(rep.dir, ignore_errors=True)
    return total, time.monotonic() - started


def summarise_notes(notes, limit=6):
    """The distinct notes of a row, most frequent first, with their counts."""
    counts = {}
    for note in notes:  # the same finding in every repetition reads as one, with its count
        note = re.sub(r"/\S*?/portcheck-faults-[^/]+/[^/\s]+", "$REP", note)
        note = re.sub(r"triton-portcheck-\w{6}", "triton-portcheck-XXXXXX", note)
        note = re.sub(r"\btmp\w{8}", "tmpXXXXXXXX", note)
        key = note.split(" (")[0] if note.startswith("finished before") else note
        counts[key] = counts.get(key, 0) + 1
    # Findings first; what only describes the fault (its kinds of damage, a late signal) after.
    ordered = sorted(counts.items(), key=lambda kv: (kv[0].startswith(("damaged by", "finished before")), -kv[1]))
    text = "; ".join(f"{k} (x{n})" if n > 1 else k for k, n in ordered[:limit])
    return text.replace("|", "\\|").replace("\n", " ")


def machine():
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(open("/proc/meminfo").readline().split()[1]) // (1024 * 1024)
    return f"{os.cpu_count()} cores ({cpu}), {mem} GiB memory, Linux {platform.release()}"


def write_markdown(path, args, rows, wall_s, command):
    version = subprocess.run([str(args.binary), "--version"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# Reliability",
        "",
        f"Produced by `bench/fault_injection.py` on {time.strftime('%Y-%m-%d')}: {machine()}; {version}; "
        f"the tool at `-j {args.jobs}` (`-j 1` for each concurrent run) while other builds shared the machine. "
        "Do not edit by hand: run the script again.",
        "",
        "```",
        command,
        "```",
        "",
        "Each repetition has its own `$TMPDIR`, `$HOME` and cache, and a unique tag in the environment of "
        "every process it starts. After each: processes of the run still alive 5 s after it ended (tag, "
        "daemon token, the tool's session), anything left in `$TMPDIR` and `.tmp-` files beside reports "
        "and cache entries, cells missing from the report (after a kill: from the next cached run), cells "
        "whose status/kind/stage/fingerprint differ from a `--no-cache` run of the same manifest (an "
        "invalid partial report counts as wrong too), and the exit code. Manifest: four demo kernels "
        "(axpy, gamma_ratio, quantize_fp8, poll_flags) x cuda:80, hip:gfx942 = 8 cells, 2 of them "
        "failing; module faults: a healthy row and the faulty row x the same two targets. Shared-store "
        "faults run against a real Redis and a real nginx WebDAV store (bench/remote_servers.py) or a "
        "hostile Redis of our own (bench/hostile_redis.py); a slow or huge store's row also fails when "
        "the run waited more than its timeout plus 1.5 s on it or its RSS passed 512 MiB.",
        "",
        "| fault | what | runs | cells lost | processes left | litter left | wrong answers | wrong exits | notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, runs, outcome, seconds, skipped in rows:
        what = FAULTS[name][3].replace("|", "\\|")
        if skipped:
            lines.append(f"| {name} | {what} | 0 | - | - | - | - | - | SKIPPED: {skipped} |")
            continue
        notes = summarise_notes(outcome.notes)
        lines.append(f"| {name} | {what} | {runs} | {outcome.cells_lost} | {outcome.processes_left} | "
                     f"{outcome.litter_left} | {outcome.wrong_answers} | {outcome.wrong_exits} | "
                     f"{notes}{'; ' if notes else ''}{seconds:.0f} s |")
    not_zero = [r[0] for r in rows if not r[4] and any(
        getattr(r[2], k) for k in ("cells_lost", "processes_left", "litter_left", "wrong_answers", "wrong_exits"))]
    lines += ["", f"Total wall time: {wall_s / 60:.1f} min. "
              + (f"Rows not 0 (each a bug to fix, see its notes): {', '.join(not_zero)}." if not_zero
                 else "Every row is 0."), ""]
    Path(path).write_text("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.environ.get("PORTCHECK_BIN") or str(REPO / "build" / "triton-portcheck"))
    parser.add_argument("--python", default=os.environ.get("PORTCHECK_PYTHON") or str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="one run of each fault")
    parser.add_argument("--faults", default=",".join(FAULTS),
                        help="comma-separated, each NAME or NAME:RUNS (its own count, --quick or not), of: "
                             + ", ".join(FAULTS))
    parser.add_argument("--jobs", type=int, default=2, help="-j for the tool (default 2)")
    parser.add_argument("--out", default=str(REPO / "RELIABILITY.md"))
    parser.add_argument("--keep", action="store_true", help="keep every repetition's folder")
    args = parser.parse_args()
    runs = 1 if args.quick else args.runs
    # NAME:RUNS gives one fault its own count: the smoke test repeats a random signal a few times
    # while every other fault runs once.
    own_runs = {}
    for entry in (f.strip() for f in args.faults.split(",") if f.strip()):
        name, _, count = entry.partition(":")
        if count and not (count.isdigit() and int(count) > 0):
            parser.error(f"--faults {entry}: expected NAME or NAME:RUNS, RUNS a positive number")
        own_runs[name] = int(count) if count else runs
    faults = list(own_runs)
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        parser.error(f"unknown faults {unknown}; known: {', '.join(FAULTS)}")
    suite = Suite(args)
    command = "bench/fault_injection.py " + " ".join(a for a in sys.argv[1:])
    started = time.monotonic()
    no_mount = mount_problem() if any(FAULTS[f][2] for f in faults) else None
    rows = []
    for name in faults:
        if FAULTS[name][2] and no_mount:
            rows.append((name, 0, Outcome(), 0.0, no_mount))
            print(f"{name}: skipped ({no_mount})", flush=True)
            continue
        print(f"{name}: {FAULTS[name][3]}", flush=True)
        outcome, seconds = run_fault(suite, name, own_runs[name])
        rows.append((name, own_runs[name], outcome, seconds, None))
        write_markdown(args.out, args, rows, time.monotonic() - started, command)
    wall = time.monotonic() - started
    write_markdown(args.out, args, rows, wall, command)
    if not args.keep:
        shutil.rmtree(suite.workdir, ignore_errors=True)
    bad = [r for r in rows if any(getattr(r[2], k) for k in ("cells_lost", "processes_left", "litter_left",
                                                               "wrong_answers", "wrong_exits"))]
    print(f"wrote {args.out}; {len(rows)} faults, {'all rows 0' if not bad else f'{len(bad)} rows not 0'}; "
          f"wall {wall / 60:.1f} min")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
