"""User code that kills the fork server, and a full disk under the files a run writes (issue 14):
the cell whose code killed the server is its own red cell, a healthy cell beside it is unaffected;
a folder or report that cannot be written is exit 3 naming the path, with the matrix printed."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AXPY_SIGNATURE, KERNELS_PY, assert_no_leftovers, cells_by_position, run_tool, write_manifest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

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



# Kills whatever its parent is, again and again: once its first parent is gone, a process left
# re-parented to triton-portcheck (the subreaper) would kill the tool itself with the next call.
KILL_PARENT_REPEATEDLY = """import os as _os
for _ in range(100000):
    _os.kill(_os.getppid(), 9)
"""
REPEATED_KILLER_PY = KERNELS_PY.replace("@triton.jit", '''@triton.constexpr_function
def pick_block(n):
''' + "".join("    " + line + "\n" for line in KILL_PARENT_REPEATEDLY.splitlines()) + '''    return n


@triton.jit''', 1).replace("BLOCK: tl.constexpr):", "BLOCK: tl.constexpr):\n    B: tl.constexpr = pick_block(BLOCK)", 1)
IMPORT_KILLER_PY = KILL_PARENT_REPEATEDLY + KERNELS_PY


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_code_that_keeps_killing_its_parent_never_reaches_the_tool(venv_python, tmp_path, isolation):
    """With --isolation process the user's code ran in the tool's own child (one kill ended the
    run, exit 137); in either mode a process whose parent it killed was re-parented to the tool
    (a subreaper) before PR_SET_PDEATHSIG ended it, so its next kill(getppid()) could end the run
    (exit -9: 6 of 6 runs alone with --isolation fork). The seccomp guard (signal_guard.py) now
    refuses any signal aimed at the tool, so each killer is its own red cell."""
    assert "pick_block(BLOCK)" in REPEATED_KILLER_PY
    (tmp_path / "compile_killer.py").write_text(REPEATED_KILLER_PY)
    (tmp_path / "import_killer.py").write_text(IMPORT_KILLER_PY)
    body = '[defaults]\ntargets = ["cuda:80"]\n'
    for name in ("compile_killer", "import_killer", "kernels"):
        body += (f'\n[[kernel]]\nname = "{name}"\ntarget = "{name}.py:axpy"\nsignature = {AXPY_SIGNATURE}\n'
                 "constants = { BLOCK = 1024 }\n")
    manifest = write_manifest(tmp_path, body)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "--no-cache",
                    "-j", "2", "--isolation", isolation], cwd=tmp_path, timeout=180)
    assert run.returncode == 1, f"exit {run.returncode}\n" + run.stdout + run.stderr
    assert "internal-error" not in run.stdout + run.stderr
    assert "no seccomp guard" not in run.stderr, run.stderr
    cells = cells_by_position(json.loads(json_path.read_text()))
    assert cells[("kernels", "cuda:80")]["status"] == "ok", cells[("kernels", "cuda:80")]["message"]
    for name, stage in (("compile_killer", "frontend"), ("import_killer", "import")):
        killer = cells[(name, "cuda:80")]
        assert (killer["status"], killer["kind"]) == ("failed", "crash"), killer
        assert "killed its parent process" in killer["message"], killer["message"]
        assert f"in stage {stage}" in killer["message"], killer["message"]
    assert_no_leftovers(run.tag)


# Signal 0 only checks permission: were the guard missing, these would reach no process.
SIGNAL_PROBES_PY = """import os as _os
_refused = []
for _what, _pid in (("tool", int(_os.environ["TRITON_PORTCHECK_TOOL_PID"])), ("every process", -1),
                    ("the tool's group", -_os.getpgid(int(_os.environ["TRITON_PORTCHECK_TOOL_PID"])))):
    try:
        _os.kill(_pid, 0)
    except PermissionError:
        _refused.append(_what)
_os.kill(_os.getpid(), 0)  # its own process, and
_os.kill(_os.getppid(), 0)  # its parent (the worker or the fork server) stay reachable
raise RuntimeError("refused: " + ", ".join(_refused))
"""


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_user_code_cannot_signal_the_tool_its_group_or_every_process(venv_python, tmp_path, isolation):
    (tmp_path / "probes.py").write_text(SIGNAL_PROBES_PY + KERNELS_PY)
    body = ('[defaults]\ntargets = ["cuda:80"]\n\n[[kernel]]\nname = "probes"\ntarget = "probes.py:axpy"\n'
            f"signature = {AXPY_SIGNATURE}\nconstants = {{ BLOCK = 1024 }}\n")
    manifest = write_manifest(tmp_path, body)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "--no-cache",
                    "--isolation", isolation], cwd=tmp_path, timeout=120)
    assert run.returncode == 1, f"exit {run.returncode}\n" + run.stdout + run.stderr
    cell = cells_by_position(json.loads(json_path.read_text()))[("probes", "cuda:80")]
    assert "refused: tool, every process, the tool's group" in cell["message"], cell


def test_the_guard_leaves_the_rest_of_the_system_alone(tmp_path):
    """The filter alone, in a child of this test that installs it against this test's process:
    the protected pids are refused, its own children and subprocesses work as before."""
    script = tmp_path / "guarded.py"
    script.write_text("""import os, subprocess, sys
from portcheck_worker.base import signal_guard
assert signal_guard.check() is None, signal_guard.check()
assert signal_guard.install() is None
child = subprocess.run([sys.executable, "-c", "import os; os.kill(os.getpid(), 0); print('child ok')"],
                       capture_output=True, text=True)
print(child.stdout.strip())
for pid in (int(os.environ[signal_guard.ENV_TOOL_PID]), -1):
    try:
        os.kill(pid, 0)
        print("reached", pid)
    except PermissionError:
        print("refused")
""")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), TRITON_PORTCHECK_TOOL_PID=str(os.getpid()))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["child", "ok", "refused", "refused"], run.stdout


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs filled to the last byte: writes of IR or a report there fail with ENOSPC."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        with open(mount_point / "ballast", "wb", buffering=0) as ballast:
            try:
                while True:
                    ballast.write(b"\0" * 1024)
            except OSError:
                pass
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


@pytest.mark.parametrize("flag", ["--save-ir", "--json"])
def test_a_full_disk_is_an_environment_problem_with_the_matrix_printed(venv_python, tmp_path, full_disk, flag):
    manifest = write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:80"]\n'
                              f'\n[[kernel]]\nname = "axpy"\ntarget = "kernels.py:axpy"\nsignature = {AXPY_SIGNATURE}\n'
                              "constants = { BLOCK = 1024 }\n")
    destination = full_disk / ("ir" if flag == "--save-ir" else "out.json")
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache", flag, destination],
                   cwd=tmp_path, timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "axpy" in run.stdout and "cuda:80" in run.stdout, run.stdout  # the matrix still printed
    lines = [line for line in run.stderr.splitlines() if line.startswith("triton-portcheck:")]
    assert len(lines) == 1, run.stderr
    assert str(full_disk) in lines[0] and "No space left on device" in lines[0], lines[0]
    assert "internal" not in run.stdout + run.stderr
    assert not [p for p in full_disk.rglob("*") if ".tmp" in p.name], list(full_disk.rglob("*"))
    if flag == "--json":
        assert not destination.exists()


SABOTAGE = {
    "open-none": ("import builtins\nbuiltins.open = None\n", "import-error", "builtins.open = None"),
    "dumps-none": ("import json\njson.dumps = None\n", "import-error", "json.dumps = None"),
    "write-gone": ("import os\ndel os.write\n", "import-error", "os.write is gone"),
    "urandom-over-3-and-4": ("import os\nfd = os.open('/dev/urandom', os.O_RDONLY)\nos.dup2(fd, 3)\n"
                             "os.dup2(fd, 4)\n", "ok", None),
    "monkeypatch": ("import json\n_dumps = json.dumps\njson.dumps = lambda *a, **k: _dumps(*a, **k)\n",
                    "ok", None),
    # Issue 50: a telemetry-like module that writes a JSON line to the descriptors it finds. Over
    # 0..63 it no longer reaches the zygote's channel (above 200); over every socket it does, and
    # the message, which breaks the protocol, makes that zygote unusable: its cells fork from the
    # server, and the kernel keeps its verdict.
    "json-to-fds-0-63": ("import os\nfor fd in range(64):\n    try:\n        os.write(fd, b'{\"event\": 1}\\n')\n"
                         "    except OSError:\n        pass\n", "ok", None),
    "json-to-every-socket": ("import os, stat\nfor fd in range(1024):\n    try:\n"
                             "        if stat.S_ISSOCK(os.fstat(fd).st_mode):\n"
                             "            os.write(fd, b'{\"event\": \"forged\"}\\n')\n"
                             "    except OSError:\n        pass\n", "ok", None),
}


@pytest.mark.parametrize("case", sorted(SABOTAGE))
def test_a_module_that_sabotages_the_runtime_gets_one_verdict_in_both_isolation_modes(case, venv_python, tmp_path):
    # Issue 28: `builtins.open = None` was internal-error under fork and import-error under
    # process; `json.dumps = None` an assembler-error per target; urandom over fds 3 and 4 a
    # frontend-error (fork) or import-error (process). The worker's plumbing now holds its own
    # primitives, and a module that leaves a standard-library name unusable fails its import.
    code, kind, message = SABOTAGE[case]
    kernels = KERNELS_PY.replace("import triton\n", "import triton\n" + code, 1)
    assert code in kernels
    manifest = write_manifest(tmp_path, f'[defaults]\ntargets = ["cuda:90", "hip:gfx942"]\n[[kernel]]\nname = "axpy"\n'
                                        f'target = "kernels.py:axpy"\nsignature = {AXPY_SIGNATURE}\nconstants = {{ BLOCK = 64 }}\n',
                              kernels_py=kernels)
    verdicts = {}
    for isolation in ("fork", "process"):
        out = tmp_path / f"{isolation}.json"
        run = run_tool(["check", "-m", manifest, "--python", venv_python, "--no-cache", "--isolation", isolation,
                        "--json", out], cwd=tmp_path)
        assert run.returncode in (0, 1), run.stderr
        cells = json.loads(out.read_text())["cells"]
        verdicts[isolation] = {(c["target"], c["status"], c["kind"], c["fingerprint"]) for c in cells}
        for c in cells:
            assert (c["kind"] or "ok") == kind, (isolation, c)
            if message:
                assert message in c["message"], c["message"]
    assert verdicts["fork"] == verdicts["process"]
