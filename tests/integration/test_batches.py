"""Batches (issues 43 and 50): several cells of one kernel module and target, run by one forked
leader that imports the module once and forks each cell from there. Whatever happens in the middle
of a batch, every verdict is the one a cell alone in its child gets (TRITON_PORTCHECK_BATCH_CELLS=1
runs one cell to a child, as before batches; `--isolation process` one cell to a process). And
cells whose frontend printed the same TTIR share one backend run, exactly."""
import concurrent.futures
import json

import pytest

from conftest import axpy_manifest, run_tool, write_manifest

pytestmark = pytest.mark.slow

# Six rows of one kernel on one target; the scheduler runs them slowest first (the manifest's
# estimate grows with BLOCK), so axpy_256 is the fourth of the batch.
ROWS = tuple((f"axpy_{block}", block) for block in (64, 128, 256, 512, 1024, 2048))
MIDDLE = "axpy_256"


def check(python, work, name, batch_cells, *extra, jobs=1, **env):
    """One run in a home of its own (no compile times remembered from another run: the batch's
    order is the manifest's estimate's), its cells' verdicts and the report's resources."""
    out = work / f"{name}-{batch_cells}.json"
    run = run_tool(["check", "--python", python, "--no-cache", "-j", jobs, "--json", out, *extra],
                   cwd=work, TRITON_PORTCHECK_HOME=work / f"home-{name}-{batch_cells}",
                   TRITON_PORTCHECK_BATCH_CELLS=batch_cells, **env)
    assert out.exists(), run.stdout + run.stderr
    report = json.loads(out.read_text())
    verdicts = {(c["row"], c["target"]): (c["status"], c["kind"], c["stage"], c["fingerprint"])
                for c in report["cells"]}
    return verdicts, report["environment"]["resources"], report


@pytest.fixture
def project(tmp_path):
    work = tmp_path / "work"
    # 8 s: memory without bound reaches 1 GiB well within it even on a loaded machine.
    write_manifest(work, axpy_manifest(["cuda:80"], ROWS).replace("[defaults]\n", "[defaults]\ntimeout = 8\n"
                                                                   'max_rss = "1GiB"\n', 1))
    return work


# Each kind of fault the worker can be made to commit (base/faults.py), in a backend stage of the
# fourth cell: a crash, a hang (the time limit), memory without bound (the memory limit), an
# exit, and an exception (a compiler error: its child writes its result, and the batch goes on).
@pytest.mark.parametrize("fault, kind", [("crash", "crash"), ("hang", "timeout"), ("memory", "oom"),
                                         ("exit", "crash"), ("raise", "mlir-error")])
def test_a_fault_in_the_middle_of_a_batch_changes_no_verdict(project, venv_python, fault, kind):
    inject = f"ttgir:{fault}@{MIDDLE}"
    # The two runs side by side (homes and reports of their own): a hang's are mostly waits.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(check, venv_python, project, fault, cells, TRITON_PORTCHECK_INJECT=inject)
                for cells in ("6", "1")]
        (batched, resources, _), (alone, alone_resources, _) = [run.result() for run in runs]
    assert batched == alone
    assert batched[(MIDDLE, "cuda:80")][1] == kind, batched
    assert all(v[0] == "ok" for (row, _), v in batched.items() if row != MIDDLE), batched
    assert resources["batches"] >= 1 and alone_resources["batches"] == 0, resources
    # A cell whose child ended without its result ends the batch: the cells after it, never begun,
    # start anew, and it runs again alone. A compiler error is a result: the batch goes on.
    assert (resources["cells_returned_by_batches"] >= 1) == (fault != "raise"), resources
    assert (resources["cells_left_by_batches"] >= 1) == (fault != "raise"), resources


MODULE_STATE = '''\
import os

import triton
import triton.language as tl

_STATE = {}


@triton.constexpr_function
def leave_a_mark(n):
    _STATE["mark"] = n
    return n


@triton.constexpr_function
def refuse_a_mark(n):
    if "mark" in _STATE:
        raise ValueError("a cell before this one changed the module")
    return n


@triton.constexpr_function
def set_the_environment(n):
    os.environ["PORTCHECK_TEST_MARK"] = "left"
    return n


@triton.jit
def marks(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, leave_a_mark(BLOCK)), 1.0)


@triton.jit
def exports(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, set_the_environment(BLOCK)), 1.0)


@triton.jit
def checks(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, refuse_a_mark(BLOCK)), 2.0)
'''


@pytest.mark.parametrize("first", ["marks", "exports"])
def test_a_cell_that_changes_its_process_leaves_nothing_for_the_next(tmp_path, venv_python, first):
    """The first row's compile changes the kernel's module (a memo a constexpr_function fills) or
    the environment, in its own child: the next cell, forked from the leader, never sees it, and
    the batch runs both."""
    work = tmp_path / "work"
    rows = (f'[[kernel]]\nname = "a_{first}"\ntarget = "kernels.py:{first}"\nsignature = {{ x_ptr = "*fp32:16" }}\n'
            'constants = { BLOCK = 1024 }\n\n'
            '[[kernel]]\nname = "b_checks"\ntarget = "kernels.py:checks"\nsignature = { x_ptr = "*fp32:16" }\n'
            'constants = { BLOCK = 64 }\n')
    write_manifest(work, '[defaults]\ntargets = ["cuda:80"]\n\n' + rows, kernels_py=MODULE_STATE)
    batched, resources, _ = check(venv_python, work, first, "2")
    alone, _, _ = check(venv_python, work, first, "1")
    assert batched == alone and all(v[0] == "ok" for v in batched.values()), batched
    assert resources == {**resources, "batches": 1, "cells_in_batches": 2, "cells_left_by_batches": 0,
                         "cells_returned_by_batches": 0}


SAME_TTIR = '''\
import triton
import triton.language as tl


@triton.jit
def fill(x_ptr, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
'''


def test_rows_whose_ttir_is_the_same_share_one_backend_run(tmp_path, venv_python):
    """MODE is never read: rows that differ only there print the same TTIR, and the backend runs
    once for them. `n`'s divisibility is in the TTIR (its argument's attribute, and the mask reads
    it): that row compiles apart. The verdicts are the ones compiled alone."""
    work = tmp_path / "work"
    rows = ""
    for name, mode, n in (("a", 2, "i32:16"), ("b", 3, "i32:16"), ("c", 2, "i32")):
        rows += (f'[[kernel]]\nname = "{name}"\ntarget = "kernels.py:fill"\n'
                 f'signature = {{ x_ptr = "*fp32:16", n = "{n}" }}\nconstants = {{ BLOCK = 256, MODE = {mode} }}\n\n')
    write_manifest(work, '[defaults]\ntargets = ["cuda:80", "hip:gfx942"]\n\n' + rows, kernels_py=SAME_TTIR)
    batched, _, report = check(venv_python, work, "ttir", "3")
    alone, _, alone_report = check(venv_python, work, "ttir", "1")
    assert batched == alone
    cells = {(c["row"], c["target"]): c for c in report["cells"]}
    for target in ("cuda:80", "hip:gfx942"):
        a, b, c = (cells[(row, target)] for row in "abc")
        assert a["ttir_key"] == b["ttir_key"] != c["ttir_key"], (a["ttir_key"], b["ttir_key"], c["ttir_key"])
        first, shared = (a, b) if b["shared_with"] else (b, a)
        assert shared["shared_with"] == first["row"] and first["shared_with"] is None and c["shared_with"] is None
        assert shared["sizes"] == first["sizes"] and shared["resources"] == first["resources"]
        assert set(shared["stages"]) == {"frontend"} and len(first["stages"]) > 3, (shared["stages"], first["stages"])
    # Alone, nothing is shared, and the keys are the same.
    assert all(c["shared_with"] is None for c in alone_report["cells"])
    assert {(c["row"], c["target"]): c["ttir_key"] for c in alone_report["cells"]} == \
        {key: c["ttir_key"] for key, c in cells.items()}


def test_the_demo_in_batches_as_one_cell_to_a_child(tmp_path, venv_python, demo_run):
    # In batches: the session's --no-cache run of the demo (a home of its own, batches as default).
    batched = {(c["row"], c["target"]): (c["status"], c["kind"], c["stage"], c["fingerprint"])
               for c in demo_run.report["cells"]}
    resources = demo_run.report["environment"]["resources"]
    work = tmp_path / "work"
    work.mkdir()
    alone, _, _ = check(venv_python, work, "demo", "1", "--demo", jobs=2)
    assert batched == alone
    assert resources["batches"] > 0 and resources["cells_left_by_batches"] == 0, resources



SLOW_TO_COMPILE = '''\
import triton
import triton.language as tl


@triton.constexpr_function
def slowly(n):
    # A kernel whose frontend takes its time: its cells are slow, and unknown. (A global `time`
    # would be refused when Triton hashes the kernel; a builtin's result is not looked at.)
    __import__("time").sleep(1.5)
    return n


@triton.jit
def slow(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, slowly(BLOCK)), 1.0)
'''


def test_a_batch_gives_its_cells_back_rather_than_leave_a_core_idle(tmp_path, venv_python):
    """Two modules of six rows each, no times known: each becomes a batch of six, one to a core.
    One module's cells take 1.5 s each, the other's a fraction: when the quick batch ends, the slow
    one is asked to stop after the cell it runs and gives back the cells it never began, which
    then run on the idle core. Nothing a returned cell says differs from alone."""
    work = tmp_path / "work"
    write_manifest(work, "", kernels_py=None)
    (work / "slow.py").write_text(SLOW_TO_COMPILE)
    text = '[defaults]\ntargets = ["cuda:80"]\n'
    for i in range(6):
        text += (f'\n[[kernel]]\nname = "slow_{i}"\ntarget = "slow.py:slow"\n'
                 f'signature = {{ x_ptr = "*fp32:16" }}\nconstants = {{ BLOCK = {64 << i} }}\n')
    write_manifest(work, text + axpy_manifest(["cuda:80"], ROWS).split("\n", 2)[2])
    batched, resources, _ = check(venv_python, work, "share", "6", jobs=2)
    alone, _, _ = check(venv_python, work, "share", "1", jobs=2)
    assert batched == alone and all(v[0] == "ok" for v in batched.values()), batched
    assert resources["cells_returned_by_batches"] >= 1 and resources["batches"] >= 3, resources


UNSUPPORTED_CALL = '''\
import time

import triton
import triton.language as tl


@triton.constexpr_function
def stamped(n):
    time.monotonic()
    return n


@triton.jit
def stamp(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, stamped(BLOCK)), 1.0)
'''


def test_a_failed_cell_leaves_no_state_for_the_next_one(tmp_path, venv_python):
    """Triton refuses `time.monotonic` in a constexpr_function when it hashes the kernel, and keeps
    a placeholder hash after refusing: in the same process the kernel's next compile succeeds.
    Alone each row fails; in a batch too, each in its own child, and the batch runs them all."""
    work = tmp_path / "work"
    text = '[defaults]\ntargets = ["cuda:80"]\n'
    for i in range(4):
        text += (f'\n[[kernel]]\nname = "stamp_{i}"\ntarget = "kernels.py:stamp"\n'
                 f'signature = {{ x_ptr = "*fp32:16" }}\nconstants = {{ BLOCK = {64 << i} }}\n')
    write_manifest(work, text, kernels_py=UNSUPPORTED_CALL)
    batched, resources, _ = check(venv_python, work, "stamp", "4")
    alone, _, _ = check(venv_python, work, "stamp", "1")
    assert batched == alone, batched
    assert {v[:3] for v in alone.values()} == {("failed", "frontend-error", "frontend")}, alone
    assert resources["batches"] >= 1 and resources["cells_returned_by_batches"] == 0, resources
    assert resources["cells_in_batches"] == 4, resources


def test_rows_of_other_limits_never_share_a_batch_or_its_backend_work(tmp_path, venv_python):
    """Issue 50: a row's backend outcome is handed only to a row of the same limits, or a row whose
    tighter limit fails it alone could take another's `ok`. Rows a and b print the same TTIR; b
    has its own memory limit, so each compiles in a process of its own, with its own backend."""
    work = tmp_path / "work"
    rows = ""
    for name, mode, extra in (("a", 2, ""), ("b", 3, 'max_rss = "3GiB"\n')):
        rows += (f'[[kernel]]\nname = "{name}"\ntarget = "kernels.py:fill"\n'
                 f'signature = {{ x_ptr = "*fp32:16", n = "i32:16" }}\nconstants = {{ BLOCK = 256, MODE = {mode} }}\n'
                 f'{extra}\n')
    write_manifest(work, '[defaults]\ntargets = ["cuda:80"]\n\n' + rows, kernels_py=SAME_TTIR)
    batched, _, report = check(venv_python, work, "limits", "3")
    alone, _, _ = check(venv_python, work, "limits", "1")
    assert batched == alone
    cells = {c["row"]: c for c in report["cells"]}
    assert cells["a"]["ttir_key"] == cells["b"]["ttir_key"]
    assert cells["a"]["shared_with"] is None and cells["b"]["shared_with"] is None


COMPILE_TIME_STATE = '''\
import triton
import triton.language as tl

import tally


class Seen:
    blocks = frozenset()


@triton.constexpr_function
def counted(n):
    # Remembers each block it was asked about in a class attribute and in another module's; a
    # cell that finds another cell's block there fails (issue 50, item 1).
    Seen.blocks = Seen.blocks | {n}
    tally.blocks = tally.blocks | {n}
    if len(Seen.blocks) > 1 or len(tally.blocks) > 1:
        raise ValueError("a cell before this one left its mark in this process")
    return n


@triton.constexpr_function
def patch_the_language(n):
    tl.some_name = tl.abs  # what another kernel below needs, and never has alone
    return n


@triton.jit
def counts(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, counted(BLOCK)), 1.0)


@triton.jit
def patches(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, patch_the_language(BLOCK)), 1.0)


@triton.jit
def uses_the_patch(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.some_name(tl.load(x_ptr + tl.arange(0, BLOCK))))
'''


def compile_time_state_project(work):
    """Four rows of each kernel of COMPILE_TIME_STATE, interleaved, on cuda:80."""
    text = '[defaults]\ntargets = ["cuda:80"]\n'
    for i in range(4):
        for kernel in ("counts", "patches", "uses_the_patch"):
            text += (f'\n[[kernel]]\nname = "{kernel}_{i}"\ntarget = "kernels.py:{kernel}"\n'
                     f'signature = {{ x_ptr = "*fp32:16" }}\nconstants = {{ BLOCK = {64 << i} }}\n')
    write_manifest(work, text, kernels_py=COMPILE_TIME_STATE)
    (work / "tally.py").write_text("blocks = frozenset()\n")
    return work


@pytest.fixture(scope="module")
def compile_time_state_alone(tmp_path_factory, venv_python):
    """The verdicts `--isolation process` (a fresh process per cell) gives the project: what every
    batch size below must give too. One run serves the three (it depends on the manifest alone,
    the same for all; its own folder and home, so no batched run can leave anything in it)."""
    work = compile_time_state_project(tmp_path_factory.mktemp("state-process") / "work")
    alone, _, _ = check(venv_python, work, "state-process", "", "--isolation", "process", jobs=2)
    return alone


@pytest.mark.parametrize("jobs, batch_cells", [(1, "12"), (2, "4"), (2, "")])
def test_no_compile_time_state_crosses_from_one_cell_to_the_next(tmp_path, venv_python, compile_time_state_alone,
                                                                jobs, batch_cells):
    """Issue 50: compile-time code that counts its calls in a class attribute or in another
    module's, or that patches triton.language for a kernel that fails alone without it, changes
    no verdict: in every batch size and order (-j 1, -j 2, the default size), each cell's verdict
    is the one `--isolation process` gives it. The rows interleave the kernels, so a batch runs
    patches before uses_the_patch and one counts row after another."""
    work = compile_time_state_project(tmp_path / "work")
    batched, resources, _ = check(venv_python, work, f"state-{jobs}", batch_cells, jobs=jobs)
    alone = compile_time_state_alone
    assert batched == alone, batched
    statuses = {row: verdict[0] for (row, _), verdict in alone.items()}
    assert {s for r, s in statuses.items() if not r.startswith("uses")} == {"ok"}, statuses
    assert {s for r, s in statuses.items() if r.startswith("uses")} == {"failed"}, statuses
    if batch_cells:  # the default forms batches where cells outnumber the cores by far
        assert resources["batches"] >= 1 and resources["cells_in_batches"] >= 4, resources
