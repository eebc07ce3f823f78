"""`bisect`: the first Triton release where a demo row's verdict changed, with real releases from
the package index in version environments (3.0.0, 3.1.0, 3.2.0, 3.5.0, 3.5.1 and 3.8.0: about
190 MB of wheel and 700 MB of disk each, made once per test session with --keep-envs; the current
release is the test venv's 3.9.0)."""
import json

import pytest

from conftest import run_tool, write_manifest
from test_manifest_rows import ATTENTION_PY, KERNEL_LEFT_INCOMPLETE

# With test_releases.py and test_versions.py: one xdist worker installs each release once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("triton-releases")]


def bisect(args, cwd, venv_python, timeout=1800, **env):
    return run_tool(["bisect", *args, "--python", venv_python], cwd=cwd, timeout=timeout, **env)


def test_rowsum_blockptr_broke_in_3_9_0_and_bisect_says_so_with_both_verdicts(venv_python, tmp_path):
    out = tmp_path / "bisect.json"
    run = bisect(["rowsum_blockptr", "--demo", "-t", "cuda:90", "--from", "3.8.0", "--keep-envs", "--json", out],
                 tmp_path, venv_python)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "first release with the new verdict: 3.9.0 (the last with the old: 3.8.0)" in run.stdout
    assert "\n  3.8.0      ok\n" in run.stdout
    assert "3.9.0      frontend-error in frontend" in run.stdout
    assert "Block pointers have been removed" in run.stdout
    # The compile time and binary size it had, and where the IR stops: 3.9.0 never got to TTIR.
    assert "compile " in run.stdout and "cubin " in run.stdout
    assert "IR: ttir only in 3.8.0" in run.stdout
    result = json.loads(out.read_text())
    (row, ) = result["rows"]
    assert row["boundary"] == {"last_old": "3.8.0", "first_new": "3.9.0"}
    assert row["verdicts"]["3.8.0"]["status"] == "ok"
    assert row["verdicts"]["3.9.0"]["kind"] == "frontend-error"


def test_poll_flags_started_working_in_3_9_0(venv_python, tmp_path):
    run = bisect(["poll_flags", "--demo", "-t", "hip:gfx942", "--from", "3.8.0", "--keep-envs"], tmp_path, venv_python)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "first release with the new verdict: 3.9.0" in run.stdout
    assert "3.8.0      frontend-error in frontend" in run.stdout and "atomic_poll" in run.stdout
    assert "\n  3.9.0      ok\n" in run.stdout
    assert "IR: ttir only in 3.9.0" in run.stdout


def test_the_first_ir_stage_that_differs_is_a_real_change_not_a_rename(venv_python, tmp_path):
    """scatter_rows fails in ptxas in both 3.8.0 and 3.9.0 (another ptxas, another fingerprint):
    their TTIR differs only in the names values get from the source; the TTGIR really differs.
    Run twice: the second run's verdicts come from the result cache, its IR is compiled anew."""
    for _ in range(2):
        run = bisect(["scatter_rows", "--demo", "-t", "cuda:90", "--from", "3.8.0", "--keep-envs"], tmp_path,
                     venv_python)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "IR: ttir differs in SSA value names only; ttgir is the first stage that differs" in run.stdout
        assert '+module attributes {' in run.stdout and '"ttng.two-ctas" = false' in run.stdout


def test_a_boundary_among_the_oldest_releases_and_all_prints_the_history_that_agrees(venv_python, tmp_path):
    """AMD's libdevice has no tgamma in any release, but how the frontend says so changed: 3.0's
    dispatcher refuses the call, from 3.2 on the per-backend module lacks the name."""
    args = ["gamma_ratio", "--demo", "-t", "hip:gfx942", "--from", "3.0.0", "--to", "3.2.0", "--keep-envs"]
    searched = bisect([*args, "--json", tmp_path / "search.json"], tmp_path, venv_python)
    assert searched.returncode == 0, searched.stdout + searched.stderr
    assert "first release with the new verdict: 3.2.0 (the last with the old: 3.1.0)" in searched.stdout
    assert "does not provide support for `tgamma`" in searched.stdout and "has no attribute 'tgamma'" in searched.stdout
    walked = bisect([*args, "--all", "--json", tmp_path / "all.json"], tmp_path, venv_python)
    assert walked.returncode == 0, walked.stdout + walked.stderr
    history = walked.stdout.split("release    verdict\n")[1].splitlines()
    assert [line.split()[0] for line in history] == ["3.0.0", "3.1.0", "3.2.0"]
    assert history[0].startswith("3.0.0      frontend-error in frontend")
    assert history[1].startswith("3.1.0      frontend-error in frontend") and not history[1].endswith("<- changed")
    assert history[2].startswith("3.2.0      frontend-error in frontend") and history[2].endswith("<- changed")
    boundary = lambda name: json.loads((tmp_path / name).read_text())["rows"][0]["boundary"]
    assert boundary("search.json") == boundary("all.json") == {"last_old": "3.1.0", "first_new": "3.2.0"}
    assert len(json.loads((tmp_path / "all.json").read_text())["rows"][0]["verdicts"]) == 3


def test_the_whole_manifest_one_line_per_row_that_changed(venv_python, tmp_path):
    run = bisect(["--demo", "-t", "cuda:90", "--from", "3.8.0", "--keep-envs"], tmp_path, venv_python)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    changed = {line.split()[0]: line for line in lines if " -> " in line}
    assert set(changed) == {"rowsum_blockptr", "poll_flags", "scatter_rows"}, run.stdout
    assert "3.8.0 -> 3.9.0  ok -> frontend-error in frontend" in changed["rowsum_blockptr"]
    # The same failure through another ptxas: a new fingerprint is a change.
    assert "assembler-error in cubin" in changed["scatter_rows"]
    assert "3 rows changed, 6 did not" in run.stdout


def test_a_range_with_no_change_exits_1(venv_python, tmp_path):
    run = bisect(["axpy", "--demo", "-t", "cuda:90", "--from", "3.8.0", "--keep-envs"], tmp_path, venv_python)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "no change: ok in 3.8.0 and in 3.9.0" in run.stdout


@pytest.mark.parametrize("args, says", [
    (["no_such_row", "--demo", "-t", "cuda:90"], "no row named 'no_such_row'"),
    (["axpy", "--demo", "-t", "cuda:90,hip:gfx942"], "one target"),
    (["axpy", "--demo", "-t", "cuda:90", "--from", "3.4.7"], "--from 3.4.7: not a Triton release on the package index"),
    (["axpy", "--demo", "-t", "cuda:90", "--from", "2.3.1"], "the oldest release triton-portcheck compiles with"),
    (["axpy", "--demo", "-t", "cuda:90", "--from", "3.9.0", "--to", "3.8.0"], "not older than --to 3.8.0"),
    (["axpy", "--demo", "-t", "cuda:90", "--from", "../3.8"], "not a Triton release version"),
])
def test_bad_arguments_are_one_line_and_exit_2(venv_python, tmp_path, args, says):
    run = bisect(args, tmp_path, venv_python, timeout=300)
    assert run.returncode == 2, run.stdout + run.stderr
    assert says in run.stderr and run.stderr.count("\n") == 1, run.stderr


def test_environments_it_installed_are_removed_unless_kept(venv_python, tmp_path):
    home = tmp_path / "home"
    run = bisect(["axpy", "--demo", "-t", "cuda:90", "--from", "3.5.0", "--to", "3.5.1"], tmp_path, venv_python,
                 TRITON_PORTCHECK_HOME=home)
    assert run.returncode == 1, run.stdout + run.stderr  # ok in both
    assert "bisect: installing triton 3.5.0 from the package index" in run.stderr
    assert "removed when bisect ends (--keep-envs keeps it)" in run.stderr
    assert "bisect: removed the environments it installed: 3.5.0, 3.5.1" in run.stderr
    listed = run_tool(["env", "list"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert "3.5.0" not in listed.stdout and "3.5.1" not in listed.stdout, listed.stdout


def test_a_warning_of_the_manifest_is_said_once_however_many_releases_run(venv_python, tmp_path):
    """Issue 44, item 7: the check layer returns its warnings with the report; bisect runs a check
    per release and says each warning once (it said the manifest's note once per release)."""
    manifest = write_manifest(tmp_path, KERNEL_LEFT_INCOMPLETE, kernels_py=ATTENTION_PY)
    run = bisect(["attention-fp16[bf16]", "-m", manifest, "-t", "cuda:90", "--from", "3.8.0", "--keep-envs"],
                 tmp_path, venv_python)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    assert "3.8.0" in run.stdout and "3.9.0" in run.stdout, run.stdout
    warnings = [line for line in run.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "is compiled in no row" in warnings[0], run.stderr
