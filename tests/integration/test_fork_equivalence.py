"""The same verdict under `--isolation fork` as alone (issue 42, items 8-10): a module's at-fork
handlers and closed standard descriptors, a zygote's import slowed by a loaded machine, and a
real timeout of a cell forked from a threaded zygote."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import AXPY_SIGNATURE, KERNELS_PY, assert_no_leftovers, cells_by_position, run_tool, write_manifest

pytestmark = pytest.mark.slow


def _rows(rows, targets, limits=""):
    body = f"[defaults]\ntargets = {json.dumps(targets)}\n{limits}"
    for name, module in rows:
        body += (f'\n[[kernel]]\nname = "{name}"\ntarget = "{module}"\nsignature = {AXPY_SIGNATURE}\n'
                 "constants = { BLOCK = 256 }\n")
    return body


def _check(folder, venv_python, isolation, *options, **env):
    out = folder / f"{isolation}.json"
    run = run_tool(["check", "--manifest", "portcheck.toml", "--python", venv_python, "--json", out,
                    "--no-cache", "-j", "2", "--isolation", isolation, *options], cwd=folder, timeout=300, **env)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    assert_no_leftovers(run.tag)
    return json.loads(out.read_text())


def _verdicts(report):
    return {k: (c["status"], c["kind"], c["stage"], c["fingerprint"]) for k, c in cells_by_position(report).items()}


# ------------------------------------------------------------------ item 8: what an import leaves

# Each at the top of a module that is otherwise healthy. In a fresh process nothing forks between
# its import and its compile; a zygote forks every cell after it.
IMPORT_LEAVES = {
    # A handler that ends any child it finds itself in.
    "at-fork-exit": "import os\nos.register_at_fork(after_in_child=lambda: os._exit(0))\n",
    # A handler that ends the process forking (the zygote) before each fork.
    "at-fork-parent-exit": "import os\nos.register_at_fork(before=lambda: os._exit(0))\n",
    # A daemonising module: its standard descriptors closed.
    "closed-stdio": "import os\nfor _fd in (0, 1, 2):\n    os.close(_fd)\n",
}


@pytest.mark.parametrize("leaves", sorted(IMPORT_LEAVES))
def test_what_an_import_leaves_for_forks_gives_the_verdict_of_a_fresh_process(venv_python, tmp_path, leaves):
    write_manifest(tmp_path, _rows([("healthy", "kernels.py:axpy"), ("fault", "fault.py:axpy")],
                                   ["cuda:80", "hip:gfx942"]))
    (tmp_path / "fault.py").write_text(IMPORT_LEAVES[leaves] + KERNELS_PY)
    forked = _check(tmp_path, venv_python, "fork")
    alone = _check(tmp_path, venv_python, "process")
    assert _verdicts(forked) == _verdicts(alone)
    assert {c["status"] for c in forked["cells"]} == {"ok"}, [(c["row"], c["kind"], c["message"]) for c in forked["cells"]]


# A module whose handlers leave a mark in MARKS (which handler, in which process), and whose kernel
# forks once at compile time, as a user's helper that runs a subprocess by fork() would.
MARKING = '''import os as _os  # not `os`: Triton refuses a global module the kernel's helpers name
import triton
import triton.language as tl

MARKS = {marks!r}


def _mark(kind):
    open(_os.path.join(MARKS, f"{{kind}}-{{_os.getpid()}}"), "w").close()


_os.register_at_fork(before=lambda: _mark("before"), after_in_child=lambda: _mark("child"))


@triton.constexpr_function
def fork_once(block):
    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return block


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    B: tl.constexpr = fork_once(BLOCK)
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs) + tl.load(y_ptr + offs))
'''


def test_at_fork_handlers_of_an_import_run_at_the_cells_own_forks_only(venv_python, tmp_path):
    """As in a fresh process: each compile's own fork runs both handlers once, in the cell and in
    its child; the fork that made the cell (from a zygote) runs neither."""
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "marking.py").write_text(MARKING.format(marks=str(marks)))
    write_manifest(tmp_path, _rows([("marking", "marking.py:axpy")], ["cuda:80", "hip:gfx942"]), kernels_py=None)
    seen = {}
    for isolation in ("fork", "process"):
        for mark in marks.iterdir():
            mark.unlink()
        report = _check(tmp_path, venv_python, isolation)
        assert {c["status"] for c in report["cells"]} == {"ok"}, report["cells"]
        names = [m.name.split("-")[0] for m in marks.iterdir()]
        seen[isolation] = (names.count("before"), names.count("child"))
    assert seen["fork"] == seen["process"], seen
    assert seen["process"][0] >= 2, seen  # at least one fork per compile


# ------------------------------------------------------------------ item 9: a loaded machine

# A third-party package (on PYTHONPATH) that asks Triton's driver at import, as libraries that pick
# options by vendor do, and is slow to import: 0.3 s of CPU and 11.2 s of waiting, as torch's import
# waits on the disk when memory pressure has evicted its 1 GB of libraries from the page cache.
SLOW_DEPENDENCY = '''import time
from triton.runtime import driver
try:
    TARGET = driver.active.get_current_target()
except Exception:  # no driver: the inspection
    TARGET = None
_until = time.process_time() + 0.3
while time.process_time() < _until:
    pass
time.sleep(11.2)
'''


class _Load:
    """CPU and memory pressure on this machine, bounded in time: a spinning process per core and
    one rewriting 1 GiB over and over."""

    def __init__(self, seconds):
        spin = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
        churn = (f"import time\nend = time.time() + {seconds}\nb = bytearray(1 << 30)\n"
                 "while time.time() < end:\n    for i in range(0, len(b), 4096):\n        b[i] = (b[i] + 1) & 255\n")
        self.procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(os.cpu_count() or 2)]
        self.procs.append(subprocess.Popen([sys.executable, "-c", churn]))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()


def test_a_slow_zygote_import_on_a_loaded_machine_leaves_the_verdicts_alone(venv_python, tmp_path):
    """With a 20 s limit, the zygotes give an import up after 5 s: the base (its dependency), then
    the inspection's package zygote, forked from the server once the base is gone. The inspection
    is then forked from the bare server and imports the package itself, as a fresh process does:
    its own 12 s or so, within its limit (a fresh process adds its interpreter's start and
    Triton's import, a few seconds on a loaded machine); the 10 s it waited for the zygotes are
    not its own. The inspection is the import every cell of the module waits on: --static-only stops
    there (a compile would only add its time)."""
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "slowdep.py").write_text(SLOW_DEPENDENCY)
    (tmp_path / "vendor.py").write_text("import slowdep  # noqa: F401\n" + KERNELS_PY)
    write_manifest(tmp_path, _rows([("vendor", "vendor.py:axpy")], ["cuda:80", "hip:gfx942"], "timeout = 20\n"),
                   kernels_py=None)
    with _Load(seconds=120):
        forked = _check(tmp_path, venv_python, "fork", "--static-only", PYTHONPATH=str(deps))
    # The reference without the load: a fresh interpreter's start and Triton's import are slow on
    # a loaded machine, which would only test the reference's own margin.
    alone = _check(tmp_path, venv_python, "process", "--static-only", PYTHONPATH=str(deps))
    assert _verdicts(forked) == _verdicts(alone)
    assert not [c for c in forked["cells"] if c["kind"]], forked["cells"]
    assert forked["environment"]["resources"]["zygotes_unusable"] >= 2, forked["environment"]["resources"]


# ------------------------------------------------------------------ item 10: a real timeout

# A module that leaves a thread at import (the zygote forks its cells with two threads), and whose
# kernel computes for ever at compile time: a real timeout, not a fork hazard's.
SPINNING = '''import threading
import time
import triton
import triton.language as tl

threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()


@triton.constexpr_function
def spin(block):
    while True:
        pass


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    B: tl.constexpr = spin(BLOCK)
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs) + tl.load(y_ptr + offs))
'''


def test_a_timeout_computing_in_a_cell_from_a_threaded_zygote_is_not_run_again(venv_python, tmp_path):
    (tmp_path / "spinning.py").write_text(SPINNING)
    write_manifest(tmp_path, _rows([("spinning", "spinning.py:axpy")], ["cuda:80"], "timeout = 4\n"), kernels_py=None)
    started = time.monotonic()
    forked = _check(tmp_path, venv_python, "fork")
    fork_s = time.monotonic() - started
    alone = _check(tmp_path, venv_python, "process")
    assert _verdicts(forked) == _verdicts(alone)
    cell = forked["cells"][0]
    assert (cell["status"], cell["kind"]) == ("failed", "timeout"), cell
    assert cell["rerun_fresh"] is False and cell["first_attempt_s"] == 0, cell
    assert forked["environment"]["resources"]["cells_rerun_fresh"] == 0
    assert cell["wall_s"] - cell["waited_s"] < 6, cell  # one 4 s limit, not two
    print(f"fork: cell {cell['wall_s']:.1f} s, run {fork_s:.1f} s; process: cell {alone['cells'][0]['wall_s']:.1f} s")
