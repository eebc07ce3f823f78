"""Zygotes (python/portcheck_worker/zygote.py): a kernel's package is imported once per target
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


def _check(tmp_path, venv_python, *options, expect=1, **env):
    log = tmp_path / "imports.log"
    log.unlink(missing_ok=True)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", "portcheck.toml", "--python", venv_python, "--json", json_path,
                    "--no-cache", "-j", "2", *options], cwd=tmp_path, timeout=300, **env)
    assert run.returncode == expect, run.stdout + run.stderr
    assert "internal-error" not in run.stdout + run.stderr
    assert_no_leftovers(run.tag)
    cells = cells_by_position(json.loads(json_path.read_text()))
    verdicts = {k: (c["status"], c["kind"], c["stage"], c["fingerprint"]) for k, c in cells.items()}
    return verdicts, len(log.read_text().splitlines())


def test_a_package_is_imported_once_per_target_with_the_verdicts_of_one_import_per_cell(venv_python, tmp_path):
    _manifest(tmp_path, COUNTING_PY)
    with_zygotes, imports = _check(tmp_path, venv_python)
    without, imports_without = _check(tmp_path, venv_python, TRITON_PORTCHECK_ZYGOTES="0")
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
    without, imports_without = _check(tmp_path, venv_python, expect=0, TRITON_PORTCHECK_ZYGOTES="0")
    assert with_zygotes == without
    assert set(with_zygotes.values()) == {("ok", None, None, None)}
    assert imports == 1, imports
    assert imports_without == 1 + ROWS * len(TARGETS), imports_without


# The second import of the module (a zygote's: the inspection's is the first) dies of SIGSEGV,
# hangs (given up after a quarter of --timeout), leaves a thread running or allocates beyond the
# zygote's data limit; every other import is healthy.
FAULTS = {
    "crash": "os.kill(os.getpid(), 11)",
    "hang": "__import__('time').sleep(3600)",
    "thread": "__import__('threading').Thread(target=__import__('time').sleep, args=(60,), daemon=True).start()",
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
