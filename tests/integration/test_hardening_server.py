"""User code that kills the fork server (issue 14): the cell whose code did it is its own red
cell, a healthy cell beside it is unaffected, and the run does not end in an internal error."""
import json

import pytest

from conftest import AXPY_SIGNATURE, KERNELS_PY, assert_no_leftovers, cells_by_position, run_tool, write_manifest

pytestmark = pytest.mark.slow

# A compile-time helper (constexpr_function) that SIGKILLs its parent: the fork server that forked the cell.
KILLER_PY = KERNELS_PY.replace("@triton.jit", '''@triton.constexpr_function
def pick_block(n):
    import os
    os.kill(os.getppid(), 9)
    return n


@triton.jit''', 1).replace("BLOCK: tl.constexpr):", "BLOCK: tl.constexpr):\n    B: tl.constexpr = pick_block(BLOCK)", 1)


def test_a_cell_that_kills_the_fork_server_is_its_own_red_cell(venv_python, tmp_path):
    assert "pick_block(BLOCK)" in KILLER_PY
    (tmp_path / "killer.py").write_text(KILLER_PY)
    body = '[defaults]\ntargets = ["cuda:80"]\n'
    for name, module in (("killer", "killer"), ("healthy", "kernels")):
        body += (f'\n[[kernel]]\nname = "{name}"\ntarget = "{module}.py:axpy"\nsignature = {AXPY_SIGNATURE}\n'
                 "constants = { BLOCK = 1024 }\n")
    manifest = write_manifest(tmp_path, body)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "--no-cache",
                    "-j", "2", "--isolation", "fork"], cwd=tmp_path, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "internal-error" not in run.stdout + run.stderr
    cells = cells_by_position(json.loads(json_path.read_text()))
    assert cells[("healthy", "cuda:80")]["status"] == "ok", cells[("healthy", "cuda:80")]["message"]
    killer = cells[("killer", "cuda:80")]
    assert (killer["status"], killer["kind"]) == ("failed", "crash"), killer
    assert "killed its parent process" in killer["message"], killer["message"]
    assert_no_leftovers(run.tag)
