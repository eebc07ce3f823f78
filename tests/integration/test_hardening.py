"""Hostile user modules and a hostile environment (issue 14): faults stay in their own cells,
nothing outlives the run, files are written where the user asked and nowhere else."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (AXPY_SIGNATURE, BINARY, KERNELS_PY, assert_no_leftovers, cells_by_position, popen_tool,
                      run_tool, tagged_processes, tool_env, write_manifest)

pytestmark = pytest.mark.slow

# Module-level code run before the kernel is defined: the faults of issue 14, item 1.
IMPORT_FAULTS = {
    "segv": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "hang": "while True:\n    pass\n",
    "bomb": "_ballast = bytearray(3 << 30)\nfor _i in range(0, len(_ballast), 4096):\n    _ballast[_i] = 1\n",
    "exits": "import os\nos._exit(0)\n",
}


def faulty_module(fault):
    return IMPORT_FAULTS[fault] + KERNELS_PY


def row(name, module):
    return (f'\n[[kernel]]\nname = "{name}"\ntarget = "{module}.py:axpy"\nsignature = {AXPY_SIGNATURE}\n'
            "constants = { BLOCK = 1024 }\n")


def import_fault_manifest(tmp_path, faults, limits='timeout = 4\nmax_rss = "512MiB"\n'):
    body = '[defaults]\ntargets = ["cuda:80", "hip:gfx942"]\n' + limits + row("healthy", "kernels")
    for fault in faults:
        (tmp_path / f"{fault}.py").write_text(faulty_module(fault))
        body += row(fault, fault)
    return write_manifest(tmp_path, body)


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_faults_at_import_are_their_own_red_cells(venv_python, tmp_path, isolation):
    manifest = import_fault_manifest(tmp_path, IMPORT_FAULTS)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "--no-cache",
                    "-j", "2", "--isolation", isolation], cwd=tmp_path, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    cells = cells_by_position(json.loads(json_path.read_text()))
    assert len(cells) == 10
    expected = {"segv": ("import-error", "SIGSEGV"), "hang": ("timeout", "time limit"),
                "bomb": ("oom", "memory limit"), "exits": ("import-error", "exited with status 0")}
    for target in ("cuda:80", "hip:gfx942"):
        assert cells[("healthy", target)]["status"] == "ok", cells[("healthy", target)]["message"]
        for fault, (kind, words) in expected.items():
            cell = cells[(fault, target)]
            assert (cell["status"], cell["kind"], cell["stage"]) == ("failed", kind, "import"), cell
            assert words in cell["message"], cell["message"]
    # The 4 s limit applies at import too (the probe used to wait a fixed 300 s).
    assert run.seconds < 60, run.seconds
    assert_no_leftovers(run.tag)


def test_ctrl_c_during_an_import_hang_exits_at_once(venv_python, tmp_path):
    manifest = import_fault_manifest(tmp_path, ["hang"], limits="timeout = 300\n")
    env = tool_env()
    tag = env["PORTCHECK_ITEST_TAG"]
    proc = popen_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache"], cwd=tmp_path,
                      env=env)
    deadline = time.monotonic() + 60
    # Wait until the hanging import runs (a worker spinning on the module), then interrupt.
    while time.monotonic() < deadline and proc.poll() is None:
        if sum("portcheck_worker" in cmd for _, cmd in tagged_processes(tag)) >= 2:
            break
        time.sleep(0.1)
    time.sleep(1.0)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:  # never leave a stuck run behind, whatever the verdict
            proc.kill()
            proc.communicate()
            for pid, _ in tagged_processes(tag):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, (out, err)
    assert time.monotonic() - sent < 5
    assert_no_leftovers(tag)


# ======================================================================== item 2: nothing outlives the run

DAEMON_AT_IMPORT = '''\
import os
if os.fork() == 0:  # a helper daemonising itself: out of the cell's session, re-parented away
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "3607"])
    os._exit(0)
'''


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_daemons_started_by_user_code_do_not_outlive_the_run(venv_python, tmp_path, isolation):
    (tmp_path / "daemon.py").write_text(DAEMON_AT_IMPORT + KERNELS_PY)
    manifest = write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:80", "hip:gfx942"]\n' + row("daemon", "daemon"))
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache", "-j", "2",
                    "--isolation", isolation], cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert_no_leftovers(run.tag)


def wait_for(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"never saw {what}")


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_sigkill_of_the_tool_leaves_no_process_and_no_temp_folder(venv_python, tmp_path, isolation):
    manifest = write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:80", "hip:gfx942"]\n' + row("axpy", "kernels"))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = tool_env(TRITON_PORTCHECK_INJECT="llir:hang", TMPDIR=temp)
    tag = env["PORTCHECK_ITEST_TAG"]
    proc = popen_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache", "-j", "2",
                       "--isolation", isolation, "--timeout", "300"], cwd=tmp_path, env=env)
    try:
        # Both cells hang in a grandchild, the way a runaway ptxas would.
        wait_for(lambda: sum("time.sleep(3600)" in cmd for _, cmd in tagged_processes(tag)) >= 2, 60,
                 "the hanging grandchildren")
        proc.kill()
        proc.communicate()
        assert_no_leftovers(tag, grace_s=5.0)
        assert not list(temp.iterdir()), list(temp.iterdir())
    finally:
        for pid, _ in tagged_processes(tag):
            os.kill(pid, signal.SIGKILL)


# ======================================================================== item 3: reports go where the path points

@pytest.fixture(scope="module")
def small_report(venv_python, tmp_path_factory):
    """A real one-cell JSON report, to render with `report` in every way a path can point."""
    workdir = tmp_path_factory.mktemp("small-report")
    manifest = write_manifest(workdir, '[defaults]\ntargets = ["cuda:80"]\n' + row("axpy", "kernels"))
    json_path = workdir / "report.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path], cwd=workdir)
    assert run.returncode == 0, run.stdout + run.stderr
    return json_path


def render(report, *args, cwd):
    return run_tool(["report", report, *args], cwd=cwd, timeout=60)


def same_cells(text, report):
    return json.loads(text)["cells"] == json.loads(report.read_text())["cells"]


def test_dash_and_dev_stdout_write_the_report_on_stdout(small_report, tmp_path):
    for destination in ("-", "/dev/stdout", tmp_path / "link-to-stdout"):
        if destination == tmp_path / "link-to-stdout":
            destination.symlink_to("/dev/stdout")
        run = render(small_report, "--json", destination, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert same_cells(run.stdout, small_report), run.stdout[:300]
        assert "axpy" in run.stderr  # the matrix moved to stderr, so stdout stays parseable
    assert not (tmp_path / "-").exists()
    assert (tmp_path / "link-to-stdout").is_symlink()


def test_symlinks_are_written_through_and_stay_links(small_report, tmp_path):
    (tmp_path / "reports").mkdir()
    link, dangling = tmp_path / "latest.json", tmp_path / "baseline.json"
    (tmp_path / "reports" / "old.json").write_text("{}")
    link.symlink_to("reports/old.json")
    dangling.symlink_to("reports/new-baseline.json")
    run = render(small_report, "--json", link, "--write-baseline", dangling, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert link.is_symlink() and dangling.is_symlink()
    assert same_cells((tmp_path / "reports" / "old.json").read_text(), small_report)
    assert json.loads((tmp_path / "reports" / "new-baseline.json").read_text())


def test_a_fifo_is_written_into_not_replaced(small_report, tmp_path):
    import threading
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    run = render(small_report, "--json", fifo, cwd=tmp_path)
    reader.join(10)
    assert run.returncode == 0, run.stderr
    assert received and same_cells(received[0], small_report)
    assert fifo.is_fifo()


def test_two_reports_on_stdout_is_a_usage_error(small_report, tmp_path):
    run = render(small_report, "--json", "-", "--sarif", "-", cwd=tmp_path)
    assert run.returncode == 2 and "standard output" in run.stderr, run.stderr


@pytest.mark.parametrize("spellings", [("X", "X"), ("X", "./X"), ("X", "sub/../X"), ("X", "link")])
def test_one_file_named_for_two_formats_is_a_usage_error(small_report, tmp_path, spellings):
    # Issue 28: `--json X --html X` exited 0 with one report silently lost.
    (tmp_path / "sub").mkdir()
    (tmp_path / "X").write_text("before")
    (tmp_path / "link").symlink_to(tmp_path / "X")
    run = render(small_report, "--json", spellings[0], "--junit", spellings[1], cwd=tmp_path)
    assert run.returncode == 2 and "--json and --junit name the same file" in run.stderr, run.stderr
    assert (tmp_path / "X").read_text() == "before"  # nothing half-written


@pytest.mark.parametrize("spellings", [("dangling", "new.json"), ("hard", "X")])
def test_a_dangling_link_or_a_hard_link_and_its_file_are_one_file(small_report, tmp_path, spellings):
    # Issue 42: a link to a file still to be written, or a second name of the same inode, given to
    # two flags, lost one report with exit 0.
    (tmp_path / "X").write_text("before")
    (tmp_path / "dangling").symlink_to("new.json")
    os.link(tmp_path / "X", tmp_path / "hard")
    run = render(small_report, "--json", spellings[0], "--junit", spellings[1], cwd=tmp_path)
    assert run.returncode == 2 and "--json and --junit name the same file" in run.stderr, run.stderr
    assert not (tmp_path / "new.json").exists() and (tmp_path / "X").read_text() == "before"


def test_dev_null_for_several_reports_is_fine_even_when_stdout_goes_there_too(small_report, tmp_path):
    # Issue 42: writing to /dev/null twice is harmless, and was refused.
    for stdout in (subprocess.PIPE, subprocess.DEVNULL):
        env = tool_env()
        proc = subprocess.run([str(BINARY), "report", str(small_report), "--json", "/dev/null", "--junit",
                               "/dev/null", "--html", "/dev/null"], cwd=tmp_path, env=env, stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("flag, path", [("--json", "build/demo-report.json"),
                                        ("--json", "portcheck-shard-1/report.json"),
                                        ("--html", "reports/deeper/x.html")])
def test_a_report_into_a_missing_relative_folder_makes_it(small_report, tmp_path, flag, path):
    # Issue 42: the README's first check command, outside a checkout, said "build is a file, not a
    # folder" when nothing named build existed (./build/... and absolute paths worked).
    run = render(small_report, flag, path, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / path).stat().st_size > 0
    (tmp_path / "afile").write_text("x")
    run = render(small_report, flag, "afile/x.json", cwd=tmp_path)
    assert run.returncode == 2 and "afile is a file, not a folder" in run.stderr, run.stderr


def test_a_report_holding_a_cell_twice_is_refused_by_every_reader(small_report, tmp_path):
    # Issue 42: diff and --baseline took such a report, each reading one of the two verdicts.
    report = json.loads(small_report.read_text())
    report["cells"].append(dict(report["cells"][0], status="failed", kind="mlir-error", fingerprint="0" * 12))
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(report))
    for args in (["report", twice], ["diff", small_report, twice], ["merge", twice, "-o", tmp_path / "m.json"],
                 ["report", small_report, "--baseline", twice]):
        run = run_tool(args, cwd=tmp_path, timeout=60)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "cells[1]: axpy on cuda:80 (triton current) is also cells[0]" in run.stderr, run.stderr
        assert len(run.stderr.splitlines()) == 1, run.stderr
    baseline = tmp_path / "baseline.json"
    entry = {"row": "axpy", "target": "cuda:80", "fingerprint": "0" * 12}
    baseline.write_text(json.dumps({"baseline_version": 1, "failures": [entry, dict(entry, fingerprint="1" * 12)]}))
    run = run_tool(["report", small_report, "--baseline", baseline], cwd=tmp_path, timeout=60)
    assert run.returncode == 2 and "failures[1]: axpy on cuda:80 (triton current) is also failures[0]" in \
        run.stderr, run.stderr


# ======================================================================== item 7: the cache verifies what it serves

def cache_entries(home):
    return sorted((Path(home) / "cache" / "results").glob("*/*.json"))


def checked(venv_python, tmp_path, home, *extra):
    json_path = tmp_path / "report.json"
    run = run_tool(["check", "--manifest", tmp_path / "portcheck.toml", "--python", venv_python, "--json", json_path,
                    *extra], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert run.returncode == 0, run.stdout + run.stderr
    return {c["target"]: c for c in json.loads(json_path.read_text())["cells"]}, run


def test_damaged_cache_entries_are_misses_reported_once(venv_python, tmp_path):
    write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:80", "hip:gfx942"]\n' + row("axpy", "kernels"))
    home = tmp_path / "home"
    first, _ = checked(venv_python, tmp_path, home)
    entries = cache_entries(home)
    assert len(entries) == 2
    # The edits of issue 14: a mistyped field, a missing result, each in one entry.
    for path, edit in zip(entries, (lambda e: e["result"].update(compile_s="x"), lambda e: e.pop("result"))):
        entry = json.loads(path.read_text())
        edit(entry)
        path.write_text(json.dumps(entry))
    second, run = checked(venv_python, tmp_path, home)
    assert run.stderr.count("damaged cache entry") == 1, run.stderr
    for target, cell in second.items():
        assert not cell["cached"], cell
        assert (cell["status"], cell["kind"], cell["fingerprint"]) == \
            (first[target]["status"], first[target]["kind"], first[target]["fingerprint"])
    third, run = checked(venv_python, tmp_path, home)  # replaced by the recompile: hits again
    assert all(c["cached"] for c in third.values()) and "damaged" not in run.stderr


def test_a_cached_result_obeys_this_runs_limits(venv_python, tmp_path):
    write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:80"]\n' + row("axpy", "kernels"))
    home = tmp_path / "home"
    checked(venv_python, tmp_path, home)
    json_path = tmp_path / "limited.json"
    run = run_tool(["check", "--manifest", tmp_path / "portcheck.toml", "--python", venv_python, "--json", json_path,
                    "--max-rss", "1"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert run.returncode == 1, run.stdout + run.stderr
    (cell, ) = json.loads(json_path.read_text())["cells"]
    assert (cell["kind"], cell["cached"]) == ("oom", False), cell


# ======================================================================== item 5 (part): values that meant "no limit"

@pytest.mark.parametrize("args", [["--timeout", "0.0001"], ["--timeout", "1e-9"], ["--timeout", "inf"],
                                  ["--timeout", "1e300"], ["--timeout", "5x"], ["-j", "-1"],
                                  ["-j", "99999999999999999999"], ["-j", "0"]])
def test_limits_that_would_silently_mean_none_are_refused(venv_python, tmp_path, args):
    manifest = write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:80"]\n' + row("axpy", "kernels"))
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, *args], cwd=tmp_path, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and args[0].lstrip("-")[:1] in run.stderr, run.stderr


@pytest.mark.parametrize("value", ["1e300", "0.0001", "inf"])
def test_a_manifest_timeout_out_of_range_names_the_line_and_key(venv_python, tmp_path, value):
    manifest = write_manifest(tmp_path, f'[defaults]\ntargets = ["cuda:80"]\ntimeout = {value}\n' + row("axpy", "kernels"))
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python], cwd=tmp_path, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "portcheck.toml:3: defaults.timeout: must be between" in run.stderr, run.stderr
