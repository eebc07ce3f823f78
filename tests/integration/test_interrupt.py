"""Ctrl-C in the middle of `check --demo`: exit 130, finished cells reported, nothing left running."""
import json
import signal
import time

import pytest

from conftest import assert_no_leftovers, popen_tool, tagged_processes, tool_env

pytestmark = pytest.mark.slow


def start_demo(tmp_path, venv_python, *extra):
    env = tool_env()
    # --no-cache: a cached demo would finish before it could be interrupted.
    proc = popen_tool(["check", "--demo", "--no-cache", "--python", venv_python, *extra], cwd=tmp_path, env=env)
    return proc, env["PORTCHECK_ITEST_TAG"]


def interrupt_after_workers_start(proc, tag, delay_s=3.0):
    """SIGINT ~delay_s after start, once at least one cell worker is seen running."""
    started = time.monotonic()
    saw_worker = False
    while time.monotonic() - started < 60 and proc.poll() is None:
        # A cell is a `portcheck_worker cell` process, or a child forked by `portcheck_worker serve`.
        workers = [cmd for _, cmd in tagged_processes(tag) if "portcheck_worker" in cmd]
        if len(workers) >= 2 or any(" cell " in cmd for cmd in workers):
            saw_worker = True
            if time.monotonic() - started >= delay_s:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "the demo finished before it could be interrupted"
    assert saw_worker, "no cell worker ever started"
    proc.send_signal(signal.SIGINT)
    return time.monotonic()


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_sigint_exits_130_with_a_partial_json_report(tmp_path, venv_python, isolation):
    json_path = tmp_path / "report.json"
    proc, tag = start_demo(tmp_path, venv_python, "--json", json_path, "--isolation", isolation)
    sent = interrupt_after_workers_start(proc, tag, delay_s=3.0 if isolation == "process" else 2.0)
    try:
        out, err = proc.communicate(timeout=15)
    except Exception:
        proc.kill()
        proc.communicate()
        raise
    took = time.monotonic() - sent
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    assert took < 5, f"exited {took:.1f} s after SIGINT"

    report = json.loads(json_path.read_text())
    assert report["interrupted"] is True
    assert report["summary"]["cells"] == len(report["cells"]) < 81
    assert report["rows"] and report["targets"]
    for cell in report["cells"]:
        # only cells that really finished are reported; none is blamed on the interruption
        assert cell["status"] in ("ok", "failed"), cell
        assert cell["kind"] != "internal-error", cell["message"]
        assert "interrupted" not in (cell["message"] or "")

    assert "INTERRUPTED" in out
    assert "?" in out  # unfinished cells
    assert_no_leftovers(tag)


def test_sigint_without_json_still_prints_the_matrix(tmp_path, venv_python):
    proc, tag = start_demo(tmp_path, venv_python)
    interrupt_after_workers_start(proc, tag, delay_s=1.0)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert out.startswith("triton-portcheck ")
    assert "INTERRUPTED" in out
    assert not list(tmp_path.iterdir()), "files written into the working directory"
    assert_no_leftovers(tag)
