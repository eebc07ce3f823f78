"""The result cache: warm re-runs compile nothing, edits invalidate exactly the affected cells."""
import json
import subprocess
import threading

import pytest

from conftest import REPO, run_tool, tool_env, write_manifest

pytestmark = pytest.mark.slow

KERNELS = '''\
import triton
import triton.language as tl


@triton.jit
def scale(x):
    return x * 2.0


@triton.jit
def uses_helper(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, scale(tl.load(x_ptr + offs)))


@triton.jit
def no_helper(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)
'''

MANIFEST = '''\
[defaults]
targets = ["cuda:80", "hip:gfx942"]

[[kernel]]
name = "uses_helper"
target = "kernels.py:uses_helper"
signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16" }
constants = { BLOCK = 128 }

[[kernel]]
name = "no_helper"
target = "kernels.py:no_helper"
signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16" }
constants = { BLOCK = 128 }
'''


def check(venv_python, directory, home, *extra):
    json_path = directory / "report.json"
    run = run_tool(["check", "--python", venv_python, "--json", json_path, *extra], cwd=directory,
                   TRITON_PORTCHECK_HOME=home)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(json_path.read_text()), run


def cached(report):
    return {(c["row"], c["target"]): c["cached"] for c in report["cells"]}


def test_editing_a_helper_invalidates_exactly_the_cells_that_call_it(venv_python, tmp_path):
    project = tmp_path / "project"
    write_manifest(project, MANIFEST, kernels_py=KERNELS)
    home = tmp_path / "home"
    first, _ = check(venv_python, project, home)
    assert not any(cached(first).values())
    second, run = check(venv_python, project, home)
    assert all(cached(second).values())
    assert "4 cells (4 from cache)" in run.stdout

    # Same number of lines, so only the helper's source changes, not any kernel's position.
    (project / "kernels.py").write_text(KERNELS.replace("return x * 2.0", "return x * 3.0"))
    third, _ = check(venv_python, project, home)
    assert cached(third) == {("uses_helper", "cuda:80"): False, ("uses_helper", "hip:gfx942"): False,
                             ("no_helper", "cuda:80"): True, ("no_helper", "hip:gfx942"): True}


def test_a_cached_result_reads_exactly_like_a_compiled_one(venv_python, tmp_path):
    project = tmp_path / "project"
    write_manifest(project, MANIFEST, kernels_py=KERNELS)
    home = tmp_path / "home"
    compiled, _ = check(venv_python, project, home)
    served, _ = check(venv_python, project, home)
    drop = {"cached", "wall_s", "waited_s", "started_s"}  # how long and when this run served it
    assert [{k: v for k, v in c.items() if k not in drop} for c in compiled["cells"]] == \
           [{k: v for k, v in c.items() if k not in drop} for c in served["cells"]]
    assert served["summary"]["from_cache"] == 4


def test_no_cache_neither_reads_nor_writes(venv_python, tmp_path):
    project = tmp_path / "project"
    write_manifest(project, MANIFEST, kernels_py=KERNELS)
    home = tmp_path / "home"
    report, _ = check(venv_python, project, home, "--no-cache")
    assert not any(cached(report).values())
    assert not (home / "cache" / "results").exists()


def test_failures_are_cached_and_timeouts_are_not(venv_python, tmp_path):
    project = tmp_path / "project"
    broken = KERNELS.replace("tl.load(x_ptr + offs) + 1.0", "tl.load(x_ptr + offs) + undefined_name")
    write_manifest(project, MANIFEST, kernels_py=broken)
    home = tmp_path / "home"
    check(venv_python, project, home)
    again, _ = check(venv_python, project, home)
    failing = [c for c in again["cells"] if c["row"] == "no_helper"]
    assert all(c["status"] == "failed" and c["kind"] == "frontend-error" and c["cached"] for c in failing)

    env_home = tmp_path / "home3"
    json_path = project / "hang.json"
    for _ in range(2):
        run_tool(["check", "--python", venv_python, "--json", json_path, "--timeout", "3", "-t", "cuda:80"],
                 cwd=project, TRITON_PORTCHECK_HOME=env_home, TRITON_PORTCHECK_INJECT="llir:hang@uses_helper")
        report = json.loads(json_path.read_text())
        timeouts = [c for c in report["cells"] if c["kind"] == "timeout"]
        assert len(timeouts) == 1 and not timeouts[0]["cached"]


def test_cache_stats_and_clean(venv_python, tmp_path):
    project = tmp_path / "project"
    write_manifest(project, MANIFEST, kernels_py=KERNELS)
    home = tmp_path / "home"
    check(venv_python, project, home)
    stats = run_tool(["cache", "stats"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert stats.returncode == 0
    assert "entries: 4" in stats.stdout and str(home) in stats.stdout
    clean = run_tool(["cache", "clean"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert clean.returncode == 0 and "removed 4" in clean.stdout
    assert "entries: 0" in run_tool(["cache", "stats"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home).stdout


def test_two_runs_sharing_one_cache(venv_python, tmp_path):
    home = tmp_path / "home"
    projects = []
    for name in ("a", "b"):
        project = tmp_path / name
        write_manifest(project, MANIFEST, kernels_py=KERNELS)
        projects.append(project)
    results = {}

    def run(project):
        results[project.name] = check(venv_python, project, home, "-j", "1")[0]

    threads = [threading.Thread(target=run, args=(p, )) for p in projects]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results) == {"a", "b"}
    for report in results.values():
        assert [c["status"] for c in report["cells"]] == ["ok"] * 4
    for entry in (home / "cache" / "results").rglob("*.json"):
        json.loads(entry.read_text())  # whole entries only
    assert not list((home / "cache" / "results").rglob(".*tmp*"))
    third, _ = check(venv_python, projects[0], home)
    assert all(cached(third).values())


def test_past_times_are_recorded_for_scheduling(venv_python, tmp_path):
    project = tmp_path / "project"
    write_manifest(project, MANIFEST, kernels_py=KERNELS)
    home = tmp_path / "home"
    check(venv_python, project, home, "--no-cache")
    timings = json.loads((home / "timings.json").read_text())
    assert len(timings) == 4 and all(v > 0 for v in timings.values())
    assert any(k.startswith("uses_helper|cuda:80|3.9.0") for k in timings)


def test_another_triton_build_changes_every_key(venv_python, tmp_path):
    """The key holds Triton's version and its compiler files' sizes and times: shown in-process."""
    script = f'''
import sys, json
sys.path.insert(0, {str(REPO / "python")!r})
from portcheck_worker.compile import keys
from portcheck_worker.base.frozen_json import convert
from portcheck_worker.base.messages import CompileRequest
import triton
request = {{"kernel": {{"file": {str(REPO / "demo" / "kernels.py")!r}, "function": "axpy",
            "import_root": {str(REPO / "demo")!r}}},
           "signature": {{"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16", "a": "fp32"}},
           "constants": {{"BLOCK": 1024}}, "options": {{}}, "target": {{"backend": "cuda", "arch": "90", "warp_size": 32}}}}
# A partial compile request, as the library's own callers hold it: converted, not checked.
first = keys.cell_key(convert(CompileRequest, request), "0.1.0")
same = keys.cell_key(convert(CompileRequest, request), "0.1.0")
keys._build_id = None
triton.__version__ = "3.8.0"
other_version = keys.cell_key(convert(CompileRequest, request), "0.1.0")
other_tool = keys.cell_key(convert(CompileRequest, request), "0.2.0")
request["target"]["arch"] = "80"
other_target = keys.cell_key(convert(CompileRequest, request), "0.2.0")
print(json.dumps([first, same, other_version, other_tool, other_target]))
'''
    out = subprocess.run([str(venv_python), "-c", script], capture_output=True, text=True, check=True,
                         env=tool_env(TRITON_CACHE_DIR=tmp_path / "tc")).stdout
    first, same, other_version, other_tool, other_target = json.loads(out.strip().splitlines()[-1])
    assert first == same
    assert len({first, other_version, other_tool, other_target}) == 4


ASKS_THE_DRIVER = '''\
import triton
import triton.language as tl

# As a library's utils pick their backend: the active driver's target, at import.
IS_HIP = triton.runtime.driver.active.get_current_target().backend == "hip"
FACTOR = tl.constexpr(3.0 if IS_HIP else 2.0)


@triton.jit
def scale(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * FACTOR)
'''


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_a_module_that_asks_the_driver_at_import_is_served_from_the_cache(venv_python, tmp_path, isolation):
    """Issue 50: such a module's cells are keyed where it was imported for their own target (an
    inspection per target, under that target's stand-in driver, as its cells import it), so a
    warm rerun compiles nothing and serves each cell what it compiled."""
    project = tmp_path / "project"
    manifest = MANIFEST.split("[[kernel]]")[0] + (
        '[[kernel]]\nname = "scale"\ntarget = "kernels.py:scale"\n'
        'signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16" }\nconstants = { BLOCK = 128 }\n')
    write_manifest(project, manifest, kernels_py=ASKS_THE_DRIVER)
    home = tmp_path / "home"
    first, _ = check(venv_python, project, home, "--isolation", isolation)
    assert not any(cached(first).values()) and {c["status"] for c in first["cells"]} == {"ok"}
    second, run = check(venv_python, project, home, "--isolation", isolation)
    assert all(cached(second).values()), cached(second)
    assert "2 cells (2 from cache)" in run.stdout
    drop = {"cached", "wall_s", "waited_s", "started_s"}
    assert [{k: v for k, v in c.items() if k not in drop} for c in first["cells"]] == \
           [{k: v for k, v in c.items() if k not in drop} for c in second["cells"]]


CONSTEXPR_FUNCTION = '''\
import triton
import triton.language as tl


@tl.constexpr
def accumulator_type(dtype: tl.dtype) -> tl.dtype:
    return tl.float32 if dtype.is_fp16() else dtype


@triton.jit
def scan_row(in_ptr, out_ptr, N, TILE: tl.constexpr):
    offs = tl.arange(0, TILE)
    acc_dtype: tl.constexpr = accumulator_type(in_ptr.type.element_ty)
    x = tl.load(in_ptr + offs, mask=offs < N, other=0).to(acc_dtype)
    tl.store(out_ptr + offs, tl.cumsum(x, 0), mask=offs < N)
'''


def test_a_kernel_using_a_function_made_constexpr_is_served_from_the_cache(venv_python, tmp_path):
    """flag_gems' cumsum: `@tl.constexpr` on a plain function. Triton's own cache_key renders it
    with its address, so the key changed in every process and its cells compiled on every run;
    the key now names the function by its code and file, and an edit of that file is a miss."""
    project = tmp_path / "project"
    manifest = MANIFEST.split("[[kernel]]")[0] + (
        '[[kernel]]\nname = "scan"\ntarget = "kernels.py:scan_row"\n'
        'signature = { in_ptr = "*fp16", out_ptr = "*fp16", N = "i32" }\nconstants = { TILE = 64 }\n')
    write_manifest(project, manifest, kernels_py=CONSTEXPR_FUNCTION)
    home = tmp_path / "home"
    first, _ = check(venv_python, project, home)
    assert {c["status"] for c in first["cells"]} == {"ok"} and not any(cached(first).values())
    second, run = check(venv_python, project, home)
    assert all(cached(second).values()), cached(second)
    kernels = project / "kernels.py"
    kernels.write_text(kernels.read_text().replace("tl.float32 if", "tl.float16 if"))
    third, _ = check(venv_python, project, home)
    assert not any(cached(third).values())
