"""Zygotes (python/portcheck_worker/server/zygote.py): a kernel's package is imported once per target
and its cells forked from that import, with the same verdicts as when every cell imported it,
and a zygote whose import fails in any way changes nothing but the speed."""
import json

import pytest

from conftest import AXPY_SIGNATURE, KERNELS_PY, assert_no_leftovers, cells_by_position, run_tool, write_manifest

pytestmark = pytest.mark.slow
TARGETS = ["cuda:80", "hip:gfx942"]
ROWS = 6

# Each import appends a line to imports.log beside the module; VENDOR is chosen at import from
# the active driver, as libraries pick their options by vendor; the kernel refuses hip's value.
COUNTING_PY = '''import fcntl
import os
import triton
import triton.language as tl
from triton.runtime import driver
_log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "imports.log")
with open(_log, "a+") as _f:  # locked: zygotes of two targets import at the same time
    fcntl.flock(_f, fcntl.LOCK_EX)
    _f.write(f"{os.getpid()}\\n")
    _f.flush()
    _f.seek(0)
    IMPORT_NUMBER = len(_f.read().splitlines())
try:
    VENDOR = tl.constexpr(2 if driver.active.get_current_target().backend == "hip" else 1)
except Exception:  # no driver: the inspection of the module
    VENDOR = tl.constexpr(0)
''' + KERNELS_PY.replace("import triton\nimport triton.language as tl\n", "", 1).replace(
    "    offs =", "    tl.static_assert(VENDOR != 2, 'picked for hip at import')\n    offs =", 1)


def _manifest(tmp_path, module_text):
    (tmp_path / "counting.py").write_text(module_text)
    body = f"[defaults]\ntargets = {json.dumps(TARGETS)}\n"
    for row in range(ROWS):
        body += (f'\n[[kernel]]\nname = "axpy_{row}"\ntarget = "counting.py:axpy"\n'
                 f"signature = {AXPY_SIGNATURE}\nconstants = {{ BLOCK = {64 << row} }}\n")
    return write_manifest(tmp_path, body)


# One cell to a child, as before batches: every cell imports the module itself, without zygotes.
ALONE = {"TRITON_PORTCHECK_ZYGOTES": "0", "TRITON_PORTCHECK_BATCH_CELLS": "1"}


def _run(tmp_path, venv_python, *options, expect=1, jobs=2, **env):
    """The report of a check of tmp_path's manifest, and how many times the module was imported."""
    log = tmp_path / "imports.log"
    log.unlink(missing_ok=True)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", "portcheck.toml", "--python", venv_python, "--json", json_path,
                    "--no-cache", "-j", jobs, *options], cwd=tmp_path, timeout=300, **env)
    assert run.returncode == expect, run.stdout + run.stderr
    assert "internal-error" not in run.stdout + run.stderr
    assert_no_leftovers(run.tag)
    return json.loads(json_path.read_text()), len(log.read_text().splitlines()) if log.exists() else 0


def _verdicts(report):
    return {k: (c["status"], c["kind"], c["stage"], c["fingerprint"])
            for k, c in cells_by_position(report).items()}


def _check(tmp_path, venv_python, *options, expect=1, jobs=2, **env):
    report, imports = _run(tmp_path, venv_python, *options, expect=expect, jobs=jobs, **env)
    return _verdicts(report), imports


def test_a_package_is_imported_once_per_target_with_the_verdicts_of_one_import_per_cell(venv_python, tmp_path):
    _manifest(tmp_path, COUNTING_PY)
    with_zygotes, imports = _check(tmp_path, venv_python)
    without, imports_without = _check(tmp_path, venv_python, **ALONE)
    assert with_zygotes == without
    # The import saw each cell's target: cuda compiles, hip meets the value it picked for hip.
    for row in range(ROWS):
        assert with_zygotes[(f"axpy_{row}", "cuda:80")][0] == "ok"
        assert with_zygotes[(f"axpy_{row}", "hip:gfx942")][:2] == ("failed", "frontend-error")
    # One import for the inspection and one per target, against one per cell and inspection.
    assert imports == 1 + len(TARGETS), imports
    assert imports_without == 1 + ROWS * len(TARGETS), imports_without


def test_a_package_that_never_asks_the_driver_at_import_is_imported_once_for_every_target(venv_python, tmp_path):
    """Its inspection's zygote forks every target's cells: nothing it imported depends on one."""
    driver_free = COUNTING_PY.replace("driver.active.get_current_target().backend", "'cuda'").replace(
        "tl.static_assert(VENDOR != 2, 'picked for hip at import')", "tl.static_assert(VENDOR == 1)")
    _manifest(tmp_path, driver_free)
    with_zygotes, imports = _check(tmp_path, venv_python, expect=0)
    without, imports_without = _check(tmp_path, venv_python, expect=0, **ALONE)
    assert with_zygotes == without
    assert set(with_zygotes.values()) == {("ok", None, None, None)}
    assert imports == 1, imports
    assert imports_without == 1 + ROWS * len(TARGETS), imports_without


# The second import of the module (a zygote's: the inspection's is the first) dies of SIGSEGV,
# hangs (given up after a quarter of --timeout) or allocates beyond the zygote's data limit;
# every other import is healthy.
FAULTS = {
    "crash": "os.kill(os.getpid(), 11)",
    "hang": "__import__('time').sleep(3600)",
    "memory": "_ballast = bytearray(8 << 30)",
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_zygote_whose_import_fails_changes_only_the_speed(venv_python, tmp_path, fault):
    second_import_fails = COUNTING_PY.replace("VENDOR = tl.constexpr(0)\n", "VENDOR = tl.constexpr(0)\nif IMPORT_NUMBER == 2:\n    "
                                              + FAULTS[fault] + "\n", 1)
    _manifest(tmp_path, second_import_fails)
    verdicts, imports = _check(tmp_path, venv_python, "--timeout", "40")
    assert imports > 1 + len(TARGETS), "the failed zygote's cells imported the module themselves"
    for row in range(ROWS):
        assert verdicts[(f"axpy_{row}", "cuda:80")][0] == "ok", verdicts
        assert verdicts[(f"axpy_{row}", "hip:gfx942")][:2] == ("failed", "frontend-error"), verdicts


def test_a_module_that_leaves_threads_at_import_is_served_by_its_zygote(venv_python, tmp_path):
    """fork() copies the forking thread only, which is all a cell needs: a zygote whose import
    started threads (as torch, transformers and tqdm do) still forks its cells."""
    threaded = COUNTING_PY.replace("VENDOR = tl.constexpr(0)\n", "VENDOR = tl.constexpr(0)\n"
                                   "import threading, time\n"
                                   "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n", 1)
    _manifest(tmp_path, threaded)
    report, imports = _run(tmp_path, venv_python)
    without, _ = _run(tmp_path, venv_python, TRITON_PORTCHECK_ZYGOTES="0")
    assert _verdicts(report) == _verdicts(without)
    assert imports == 1 + len(TARGETS), imports
    resources = report["environment"]["resources"]
    assert resources["zygotes_started"] == 1 + len(TARGETS) and resources["zygotes_unusable"] == 0, resources
    assert resources["cells_rerun_fresh"] == 0, resources
    # Each compile waited for no import of its own: its process was forked from a warm zygote.
    assert all(c["wall_s"] - c["compile_s"] - c["waited_s"] < 2.0 for c in report["cells"]), report["cells"]


# A package whose import starts a thread that holds LOCK until someone asks for it (REQUEST):
# in the user's own process, importing `late` asks and gets it at once; in a process forked from
# the zygote (which imported `early`), the holder does not exist and LOCK stays held for ever.
LOCKPKG_INIT = '''import threading
LOCK = threading.Lock()
REQUEST = threading.Event()


def _holder():
    with LOCK:
        REQUEST.wait()


threading.Thread(target=_holder, daemon=True).start()
'''
LATE_IMPORT = {
    # The import waits for the lock: the cell hangs until its time limit.
    "hang": "import lockpkg\nlockpkg.REQUEST.set()\nlockpkg.LOCK.acquire()\n",
    # The import gives up on the lock and raises: an import error.
    "raise": "import lockpkg\nlockpkg.REQUEST.set()\n"
             "if not lockpkg.LOCK.acquire(timeout=3):\n    raise RuntimeError('the lock holder is gone')\n",
}


@pytest.mark.parametrize("how", sorted(LATE_IMPORT))
def test_a_cell_that_meets_a_lock_held_at_fork_time_gets_the_verdict_of_a_fresh_process(venv_python, tmp_path, how):
    pkg = tmp_path / "lockpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(LOCKPKG_INIT)
    (pkg / "early.py").write_text(KERNELS_PY)
    (pkg / "late.py").write_text(LATE_IMPORT[how] + KERNELS_PY)
    body = '[defaults]\ntargets = ["cuda:80"]\n'
    for name, module in (("early", "lockpkg.early"), ("late", "lockpkg.late")):
        body += (f'\n[[kernel]]\nname = "{name}"\ntarget = "{module}:axpy"\nsignature = {AXPY_SIGNATURE}\n'
                 "constants = { BLOCK = 256 }\n")
    write_manifest(tmp_path, body, kernels_py=None)
    report, _ = _run(tmp_path, venv_python, "--timeout", "12", expect=0)
    cells = cells_by_position(report)
    assert {k: c["status"] for k, c in cells.items()} == {("early", "cuda:80"): "ok", ("late", "cuda:80"): "ok"}
    assert cells[("late", "cuda:80")]["rerun_fresh"] is True
    assert cells[("early", "cuda:80")]["rerun_fresh"] is False
    # The report counts both runs of the cell run again (issue 42): the hang's first run is a
    # whole time limit, stalled on the lock.
    late = cells[("late", "cuda:80")]
    assert 0 < late["first_attempt_s"] < late["wall_s"], late
    assert late["first_attempt_s"] >= (12 if how == "hang" else 0), late
    # The inspection of `late` met the lock too, and so did its compile: both ran again.
    assert report["environment"]["resources"]["cells_rerun_fresh"] == 2, report["environment"]["resources"]
    fresh, _ = _run(tmp_path, venv_python, "--timeout", "12", "--isolation", "process", expect=0)
    assert _verdicts(report) == _verdicts(fresh)


# A third-party package (on PYTHONPATH, outside the manifest's folder) that is slow to import and
# counts its imports; the user's module imports it first, then asks the driver for its vendor.
THIRD_PARTY = '''import fcntl, os, time
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "imports.log"), "a") as _f:
    fcntl.flock(_f, fcntl.LOCK_EX)
    _f.write(f"{os.getpid()}\\n")
time.sleep(1)
'''


def test_third_party_imports_are_made_once_for_every_target(venv_python, tmp_path):
    """The base zygote imports what the package's import begins with (heavydep here), and each
    target's zygote is forked from it: one import of it in all, against one per target."""
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "heavydep.py").write_text(THIRD_PARTY)
    lib = tmp_path / "lib"
    lib.mkdir()
    _manifest(lib, "import heavydep\n" + COUNTING_PY)
    report, _ = _run(lib, venv_python, PYTHONPATH=str(deps))
    base_imports = len((deps / "imports.log").read_text().splitlines())
    assert base_imports == 1, base_imports
    (deps / "imports.log").unlink()
    # Each of these imports sleeps a second: four at a time.
    without, _ = _run(lib, venv_python, PYTHONPATH=str(deps), jobs=4, **ALONE)
    assert _verdicts(report) == _verdicts(without)
    # Every cell and inspection imported it itself.
    assert len((deps / "imports.log").read_text().splitlines()) == 1 + ROWS * len(TARGETS)
    resources = report["environment"]["resources"]
    # The base, the inspections' zygote, one per target.
    assert resources["zygotes_started"] == 2 + len(TARGETS), resources


def test_zygotes_stay_within_their_memory_share_and_retire_without_changing_a_verdict(venv_python, tmp_path):
    """Each zygote holds 300 MB of its own; --worker-max-rss 1.5 GiB leaves zygotes 768 MiB:
    two at a time. Four are wanted (the inspections' and one per target): idle ones are retired,
    counted, and the server is never replaced for them."""
    targets = ["cuda:80", "cuda:90", "hip:gfx942"]
    ballast = COUNTING_PY.replace("VENDOR = tl.constexpr(0)\n", "VENDOR = tl.constexpr(0)\n"
                                  "_ballast = bytearray(300 << 20)\n", 1)
    (tmp_path / "counting.py").write_text(ballast)
    body = f"[defaults]\ntargets = {json.dumps(targets)}\n"
    for row in range(3):
        body += (f'\n[[kernel]]\nname = "axpy_{row}"\ntarget = "counting.py:axpy"\n'
                 f"signature = {AXPY_SIGNATURE}\nconstants = {{ BLOCK = {64 << row} }}\n")
    write_manifest(tmp_path, body, kernels_py=None)
    report, imports = _run(tmp_path, venv_python, "--worker-max-rss", "1536MiB")
    without, _ = _run(tmp_path, venv_python, TRITON_PORTCHECK_ZYGOTES="0")
    assert _verdicts(report) == _verdicts(without)
    resources = report["environment"]["resources"]
    assert resources["fork_servers_started"] == 1, resources
    assert resources["zygotes_retired"] >= 1, resources
    # Retired ones are not imported again and again: cells of one target run together.
    assert resources["zygotes_started"] <= 1 + len(targets), resources


@pytest.mark.parametrize("victim", ["cuda", "hip"])
def test_a_cell_that_kills_its_zygote_beside_a_sibling_is_blamed_and_the_run_ends(venv_python, tmp_path, victim):
    """Both targets' zygotes are forked from one base in the same breath, and neither may hold the
    other's channel: when a cell kills its own zygote while the sibling lives on, the server must
    see that zygote end (and end itself, so that the tool retries the cells alone and blames the
    one that did it). Each order is tried: one of them kills the zygote forked second."""
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "heavydep.py").write_text(THIRD_PARTY)
    pkg = tmp_path / "lib" / "killpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import heavydep\n")
    # It asks the driver at import, so each target gets its own zygote, forked from the base; at
    # compile time, the victim target's cells kill their parent.
    (pkg / "kernels.py").write_text(
        "from triton.runtime import driver\n"
        "try:\n    BACKEND = driver.active.get_current_target().backend\n"
        "except Exception:\n    BACKEND = None\n" +
        KERNELS_PY.replace("@triton.jit", f"""@triton.constexpr_function
def pick_block(n):
    import os
    if BACKEND == "{victim}":
        os.kill(os.getppid(), 9)
    return n


@triton.jit""", 1).replace("BLOCK: tl.constexpr):", "BLOCK: tl.constexpr):\n    B: tl.constexpr = pick_block(BLOCK)", 1))
    body = '[defaults]\ntargets = ["cuda:80", "hip:gfx942"]\n'
    for row in range(3):
        body += (f'\n[[kernel]]\nname = "axpy_{row}"\ntarget = "killpkg.kernels:axpy"\n'
                 f"signature = {AXPY_SIGNATURE}\nconstants = {{ BLOCK = {256 << row} }}\n")
    write_manifest(tmp_path / "lib", body, kernels_py=None)
    report, _ = _run(tmp_path / "lib", venv_python, "--timeout", "60", PYTHONPATH=str(deps))
    for (row, target), cell in cells_by_position(report).items():
        if target.startswith(victim):
            assert (cell["status"], cell["kind"]) == ("failed", "crash"), cell
            assert "killed its parent process" in cell["message"], cell["message"]
        else:
            assert cell["status"] == "ok", cell
    assert report["environment"]["resources"]["fork_servers_started"] >= 2


# The user's package (after its third-party import, the base's) takes a second to import and logs
# when each import began and ended.
TIMED_PY = '''import heavydep, os, time
_begun = time.monotonic()
time.sleep(1)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "timed.log"), "a") as _f:
    _f.write(f"{_begun} {time.monotonic()}\\n")
'''


def test_target_zygotes_import_beside_the_inspections_once_the_base_is_ready(venv_python, tmp_path):
    """Issue 43: a package that asks the driver at import needs a zygote per target; they were
    started only once the inspections' zygote had imported, one import after another. Forked from
    the base as soon as it is ready, on the cores the inspections leave idle, they import beside
    it: here the three imports of the user's package overlap in time."""
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "heavydep.py").write_text(THIRD_PARTY)
    lib = tmp_path / "lib"
    lib.mkdir()
    _manifest(lib, TIMED_PY + COUNTING_PY)
    report, _ = _run(lib, venv_python, PYTHONPATH=str(deps), jobs=3)
    spans = sorted(tuple(map(float, line.split())) for line in (lib / "timed.log").read_text().splitlines())
    assert len(spans) == 1 + len(TARGETS), spans  # the inspections' zygote, one per target
    first_end = spans[0][1]
    assert all(begun < first_end for begun, _ in spans[1:]), spans
    # The reference: every cell imports for itself, each import two seconds of sleep: four at a time.
    without, _ = _run(lib, venv_python, PYTHONPATH=str(deps), jobs=4, **ALONE)
    assert _verdicts(report) == _verdicts(without)


HUGE_PAGES_PY = '''import ctypes
import triton
import triton.language as tl

HEAP = bytearray(b"x") * (64 << 20)  # 64 MiB the import wrote, as torch's import does
_ADDRESS = ctypes.addressof((ctypes.c_char * 1).from_buffer(HEAP))


@tl.constexpr
def heap_huge_kib():
    """AnonHugePages of the mapping that holds HEAP, in this process."""
    inside = False
    for line in open("/proc/self/smaps"):
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:
            low, high = (int(x, 16) for x in fields[0].split("-"))
            inside = low <= _ADDRESS < high
        elif inside and fields[0] == "AnonHugePages:":
            return int(fields[1])
    return 0


@triton.jit
def touch(x_ptr, ROW: tl.constexpr):
    huge: tl.constexpr = heap_huge_kib()
    tl.static_assert(huge >= 32768, "the cell inherited the import's memory in small pages")
    tl.store(x_ptr, 1.0)
'''

# Whether this kernel can collapse memory into huge pages at all, asked without our code.
COLLAPSES = """import ctypes, mmap
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
area = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
area.write(b"x" * (8 << 20))
start = (ctypes.addressof(ctypes.c_char.from_buffer(area)) + (2 << 20) - 1) & ~((2 << 20) - 1)
print(int(libc.madvise(start, 4 << 20, 25) == 0))  # MADV_COLLAPSE
"""


def test_cells_inherit_their_zygotes_memory_in_huge_pages(venv_python, tmp_path):
    """A fork copies one page-table entry per 2 MiB of a zygote's memory instead of 512, and the
    cell's exit drops as few: the zygote collapses what its import wrote into huge pages
    (base/huge_pages.py). Where the kernel cannot (no MADV_COLLAPSE, THP off) there is nothing to
    test."""
    import subprocess
    probe = subprocess.run([venv_python, "-c", COLLAPSES], capture_output=True, text=True, check=True)
    if int(probe.stdout.strip() or 0) == 0:
        pytest.skip("this kernel collapses nothing into huge pages")
    (tmp_path / "huge.py").write_text(HUGE_PAGES_PY)
    rows = "".join(f'\n[[kernel]]\nname = "touch_{row}"\ntarget = "huge.py:touch"\n'
                   f'signature = {{ x_ptr = "*fp32" }}\nconstants = {{ ROW = {row} }}\n' for row in range(4))
    write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:90"]\n' + rows, kernels_py=None)
    run = run_tool(["check", "--python", venv_python, "--no-cache", "--json", tmp_path / "r.json"],
                   cwd=tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    assert [c["status"] for c in report["cells"]] == ["ok"] * 4, run.stdout + run.stderr


def test_the_least_recently_used_idle_zygotes_are_retired_until_one_more_fits():
    """zygote_memory.Room, alone: the idle ones go first by last use; one still importing counts
    at the largest size; one that work waits on, or whose forked zygotes live, stays."""
    import sys
    from conftest import REPO
    sys.path.insert(0, str(REPO / "python"))
    from portcheck_worker.server.zygote_memory import Room

    class Z:
        def __init__(self, name, size, last_used, ready=True, busy=False):
            self.name, self.size, self.last_used, self.ready, self._busy = name, size, last_used, ready, busy
            self.retiring = False

        def pss(self):
            return self.size

        def busy(self):
            return self._busy

    old, busy, parent, recent = Z("old", 100, 1), Z("busy", 100, 2, busy=True), Z("parent", 100, 3), Z("recent", 100, 4)
    importing = Z("importing", 10, 5, ready=False)  # counted at the largest size, 100
    room = Room([old, busy, parent, recent, importing], budget=400)
    assert not room.fits()  # 500 counted + 100 more
    chosen = room.to_retire(keep=recent, has_children=lambda z: z is parent)
    assert [z.name for z in chosen] == ["old"]
    assert not room.fits()  # 400 + 100: busy, parent, recent and importing stay
    assert Room([old, recent], budget=400).fits() and not Room([old] * 24, budget=10 ** 9).fits()
