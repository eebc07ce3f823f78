"""User errors and worker faults: what the tool reports, how it exits, and what it leaves behind."""
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (AXPY_SIGNATURE, assert_no_leftovers, axpy_manifest, cells_by_position, popen_tool,
                      run_tool, tagged_processes, tool_env, write_manifest)

# ======================================================================== (a) a kernel that fails to import

BROKEN_PY = '''\
import triton
import triton.language as tl

raise RuntimeError("broken on purpose at import")


@triton.jit
def kern(x_ptr, BLOCK: tl.constexpr):
    pass
'''


def test_import_error_fails_every_cell_of_its_row_only(venv_python, tmp_path):
    manifest = write_manifest(tmp_path, axpy_manifest(["cuda:80", "hip:gfx942"]) + (
        '\n[[kernel]]\nname = "broken"\ntarget = "broken.py:kern"\n'
        'signature = { x_ptr = "*fp32:16" }\nconstants = { BLOCK = 128 }\n'))
    (tmp_path / "broken.py").write_text(BROKEN_PY)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "-j", "2"],
                   cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(json_path.read_text())
    cells = cells_by_position(report)
    assert len(cells) == 4
    fingerprints = set()
    for target in ("cuda:80", "hip:gfx942"):
        broken = cells[("broken", target)]
        assert broken["status"] == "failed"
        assert broken["kind"] == "import-error"
        assert broken["stage"] == "import"
        assert "RuntimeError: broken on purpose at import" in broken["message"]
        assert "broken on purpose" in broken["log"]
        fingerprints.add(broken["fingerprint"])
        ok = cells[("axpy", target)]
        assert ok["status"] == "ok", ok["message"]
        assert ok["sizes"]
    assert len(fingerprints) == 1
    assert re.search(r"^broken\s+import:A\s+import:A$", run.stdout, re.M), run.stdout
    assert re.search(r"^axpy\s+ok\s+ok$", run.stdout, re.M), run.stdout
    assert report["summary"]["ok"] == 2 and report["summary"]["failed"] == 2


# ======================================================================== (b) bad manifests

GOOD_ROW = (f'[[kernel]]\nname = "axpy"\ntarget = "kernels.py:axpy"\nsignature = {AXPY_SIGNATURE}\n'
            'constants = { BLOCK = 1024 }\n')


def second_row(signature=AXPY_SIGNATURE, constants="{ BLOCK = 1024 }", extra=""):
    return (f'[[kernel]]\nname = "axpy_b"\ntarget = "kernels.py:axpy"\nsignature = {signature}\n'
            f"constants = {constants}\n{extra}")


HEAD = '[defaults]\ntargets = ["cuda:80"]\n\n' + GOOD_ROW + "\n"
# Line numbers below: HEAD is 9 lines; the second row's [[kernel]] is line 10, name 11, target 12,
# signature 13, constants 14, the extra key 15.

BAD_MANIFESTS = {
    "toml-syntax": (HEAD + '[[kernel]]\nname = "axpy_b\ntarget = "kernels.py:axpy"\n', 11, None, "invalid TOML"),
    "unknown-key": (HEAD + second_row(extra='colour = "red"\n'), 15, "kernel 'axpy_b'.colour", "unknown key"),
    "bad-target": ('[defaults]\ntargets = ["cuda:80",\n  "cuda:abc"]\n\n' + GOOD_ROW, 3,
                   "defaults.targets[1]", "'cuda:abc'"),
    "bad-type": (HEAD + second_row(signature=AXPY_SIGNATURE.replace('x_ptr = "*fp32:16"', 'x_ptr = "*fp17"')), 13,
                 "kernel 'axpy_b'.signature.x_ptr", "'*fp17'"),
    "unknown-option": (HEAD + second_row(extra="options = { num_wraps = 4 }\n"), 15,
                       "kernel 'axpy_b'.options.num_wraps", "did you mean 'num_warps'"),
    "extra-argument": (HEAD + second_row(signature=AXPY_SIGNATURE.replace(" }", ', z_ptr = "*fp32" }')), 13,
                       "kernel 'axpy_b'.signature.z_ptr", "no argument 'z_ptr'"),
    "missing-argument": (HEAD + second_row(signature=AXPY_SIGNATURE.replace(', a = "fp32"', "")), 13,
                         "kernel 'axpy_b'.signature", "argument 'a'"),
    "constexpr-typed": (HEAD + second_row(signature=AXPY_SIGNATURE.replace(" }", ', BLOCK = "i32" }'),
                                          constants="{ }"), 13, "kernel 'axpy_b'.signature.BLOCK", "constexpr"),
}


@pytest.mark.parametrize("case", list(BAD_MANIFESTS))
def test_bad_manifest_is_one_line_and_exit_2(venv_python, tmp_path, case):
    body, line, key, fragment = BAD_MANIFESTS[case]
    manifest = write_manifest(tmp_path, body, name="bad.toml")
    # the line we name really is the offending one
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path], cwd=tmp_path)
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and run.stderr.endswith("\n"), repr(run.stderr)
    message = lines[0]
    assert f"{manifest}:{line}:" in message or f"bad.toml:{line}:" in message, message
    if key is not None:
        assert key in message, message
    assert fragment in message, message
    assert not json_path.exists()
    assert not list(tmp_path.glob(".out.json*")), "a temporary report file was left behind"


def test_bad_manifest_rows_use_the_right_line(tmp_path):
    """Guard for the table above: the named line holds the offending text."""
    for case, (body, line, key, fragment) in BAD_MANIFESTS.items():
        text = body.splitlines()[line - 1]
        needle = {"toml-syntax": '"axpy_b', "unknown-key": "colour", "bad-target": "cuda:abc",
                  "bad-type": "*fp17", "unknown-option": "num_wraps", "extra-argument": "z_ptr",
                  "missing-argument": "signature", "constexpr-typed": 'BLOCK = "i32"'}[case]
        assert needle in text, (case, line, text)


def test_missing_manifest_is_exit_2(venv_python, tmp_path):
    missing = tmp_path / "nowhere" / "portcheck.toml"
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", missing, "--python", venv_python, "--json", json_path], cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert str(missing) in lines[0] and "no such manifest" in lines[0]
    assert not json_path.exists()


def test_default_manifest_missing_in_cwd_is_exit_2(venv_python, tmp_path):
    run = run_tool(["check", "--python", venv_python], cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and "portcheck.toml" in run.stderr


COMMANDS = "check, report, merge, export, repro, env, diff, bisect, cache, capture, targets"


@pytest.mark.parametrize("args, message", [
    (["bogus"], f"unknown command 'bogus'; the commands are: {COMMANDS} (see --help)"),
    (["chek", "--demo"], f"unknown command 'chek' (did you mean 'check'?); the commands are: {COMMANDS} (see --help)"),
    (["env", "ad", "3.8.0"], "unknown command 'env ad' (did you mean 'env add'?); the commands of 'env' are: add, "
                             "list, remove (see env --help)"),
    ([], f"a command is needed; the commands are: {COMMANDS} (see --help)"),
    (["cache"], "a command is needed; the commands of 'cache' are: stats, clean (see cache --help)"),
])
def test_an_unknown_or_missing_command_is_named_beside_the_real_ones(tmp_path, args, message):
    run = run_tool(args, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == f"triton-portcheck: {message}\n"


# ======================================================================== (c) no Triton


def python_without_triton():
    for candidate in ("/usr/bin/python3", shutil.which("python3")):
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run([candidate, "-c", "import triton"], capture_output=True)
        if probe.returncode != 0:
            return candidate
    pytest.skip("every python3 found has Triton installed")


@pytest.mark.parametrize("command", ["check", "targets"])
def test_python_without_triton_is_exit_3(tmp_path, command):
    python = python_without_triton()
    json_path = tmp_path / "out.json"
    args = ["check", "--demo", "--python", python, "--json", json_path] if command == "check" else \
        ["targets", "--python", python]
    run = run_tool(args, cwd=tmp_path, timeout=120)
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "pip install" in lines[0] and python in lines[0], lines[0]
    assert not json_path.exists()


def test_python_that_does_not_exist_is_exit_3(tmp_path):
    run = run_tool(["check", "--demo", "--python", tmp_path / "no-python"], cwd=tmp_path)
    assert run.returncode == 3
    assert len(run.stderr.splitlines()) == 1 and "no-python" in run.stderr


# ======================================================================== (d) injected faults, real worker

TWO_TARGETS = ["cuda:80", "hip:gfx942"]


def fault_run(venv_python, tmp_path, inject, targets, extra=(), rows=(("axpy", 1024), ), timeout=300):
    manifest = write_manifest(tmp_path, axpy_manifest(targets, rows))
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "--jobs", "2",
                    *extra], cwd=tmp_path, timeout=timeout, TRITON_PORTCHECK_INJECT=inject)
    assert json_path.exists(), run.stdout + run.stderr
    return run, json.loads(json_path.read_text())


def test_crash_in_one_row_does_not_affect_the_others(venv_python, tmp_path):
    run, report = fault_run(venv_python, tmp_path, "ttgir:crash@axpy", TWO_TARGETS,
                            rows=(("axpy", 1024), ("axpy_small", 256)))
    assert run.returncode == 1
    cells = cells_by_position(report)
    assert len(cells) == 4
    for target in TWO_TARGETS:
        crashed = cells[("axpy", target)]
        assert crashed["status"] == "failed"
        assert crashed["kind"] == "crash", crashed["message"]
        assert crashed["stage"] == "ttgir"
        assert "SIGSEGV" in crashed["message"]
        assert re.fullmatch(r"[0-9a-f]{12}", crashed["fingerprint"])
        healthy = cells[("axpy_small", target)]
        assert healthy["status"] == "ok", healthy["message"]
        assert healthy["sizes"]
    assert cells[("axpy", "cuda:80")]["fingerprint"] == cells[("axpy", "hip:gfx942")]["fingerprint"]
    assert re.search(r"^axpy\s+crash:A\s+crash:A$", run.stdout, re.M), run.stdout
    assert_no_leftovers(run.tag)


def test_hang_is_a_timeout_and_leaves_no_process(venv_python, tmp_path):
    manifest = write_manifest(tmp_path, axpy_manifest(TWO_TARGETS))
    json_path = tmp_path / "out.json"
    env = tool_env(TRITON_PORTCHECK_INJECT="llir:hang")
    tag = env["PORTCHECK_ITEST_TAG"]
    started = time.monotonic()
    proc = popen_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path,
                       "--jobs", "2", "--timeout", "3"], cwd=tmp_path, env=env)
    # While it runs, the sleeping grandchild is visible: the leak check below can see such processes.
    seen_sleeper = False
    while proc.poll() is None:
        if any("time.sleep(3600)" in cmd for _, cmd in tagged_processes(tag)):
            seen_sleeper = True
        time.sleep(0.05)
    out, err = proc.communicate()
    elapsed = time.monotonic() - started
    assert seen_sleeper, "never saw the injected grandchild: the leak check would prove nothing"
    assert proc.returncode == 1, out + err
    assert elapsed < 30, f"two 3 s timeouts took {elapsed:.1f} s"
    report = json.loads(json_path.read_text())
    for cell in report["cells"]:
        assert cell["kind"] == "timeout", cell["message"]
        assert cell["stage"] == "llir"
        assert 2.5 <= cell["wall_s"] < 10, cell["wall_s"]
    assert report["environment"]["options"]["timeout_s"] == 3
    # Nothing of ours survives: neither the worker nor its sleeping grandchild.
    assert_no_leftovers(tag)
    leaked = [(pid, cmd) for pid, cmd in tagged_processes(tag)
              if "portcheck_worker" in cmd or "time.sleep(3600)" in cmd]
    assert not leaked


def test_memory_bomb_is_oom_and_quick(venv_python, tmp_path):
    started = time.monotonic()
    run, report = fault_run(venv_python, tmp_path, "cubin:memory", ["cuda:80"],
                            extra=("--max-rss", "1GiB", "--timeout", "120"))
    elapsed = time.monotonic() - started
    assert run.returncode == 1
    (cell, ) = report["cells"]
    assert cell["kind"] == "oom", cell["message"]
    assert cell["stage"] == "cubin"
    # Forked, it held its fork server's memory too: the verdict is a fresh process's.
    assert cell["rerun_fresh"] is True
    assert cell["wall_s"] < 20, cell["wall_s"]
    assert elapsed < 40
    assert report["environment"]["options"]["max_rss_bytes"] == 1 << 30
    assert_no_leftovers(run.tag)


def test_worker_exit_without_result_in_a_compile_stage_is_a_crash(venv_python, tmp_path):
    # An exit in a compile stage with no traceback is what os._exit() in the kernel's code or
    # LLVM's fatal error looks like: the cell's crash, not a bug of ours (issue 14, item 6).
    run, report = fault_run(venv_python, tmp_path, "frontend:exit", TWO_TARGETS)
    assert run.returncode == 1
    assert len(report["cells"]) == 2
    for cell in report["cells"]:
        assert cell["kind"] == "crash", cell["message"]
        assert cell["stage"] == "frontend"
        assert "status 70 in stage frontend" in cell["message"]
    assert_no_leftovers(run.tag)


def test_fault_for_another_row_changes_nothing(venv_python, tmp_path):
    run, report = fault_run(venv_python, tmp_path, "ttgir:crash@no_such_row", ["cuda:80"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert [c["status"] for c in report["cells"]] == ["ok"]
