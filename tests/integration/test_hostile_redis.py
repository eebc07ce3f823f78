"""A Redis store that is hostile or broken (issue 28): each answer is bounded as a whole, in time
and in size, however the server paces or pads it, and no password it echoes is printed.

The store is bench/hostile_redis.py, a small RESP server of our own on loopback (a real Redis
cannot be made to drip), run in a thread of this test; the tool sees a Redis."""
import json
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, popen_tool, tool_env

sys.path.insert(0, str(REPO / "bench"))
from hostile_redis import PASSWORD, HostileRedis  # noqa: E402

TIMEOUT_S = 2


def run_against(store, tmp_path, venv_python):
    """The demo on one target against `store`; the tool's peak RSS read from /proc as it runs."""
    out = tmp_path / "report.json"
    args = ["check", "--demo", "-t", "cuda:90", "--python", venv_python, "--json", out,
            "--cache-url", store.url, "--cache-timeout", str(TIMEOUT_S)]
    env = tool_env(TRITON_PORTCHECK_HOME=tmp_path / "home")
    started = time.monotonic()
    proc = popen_tool(args, cwd=tmp_path, env=env)
    peak_kib = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    store.stop()
    assert proc.returncode == 1, stdout + stderr  # the demo has new failures
    report = json.loads(out.read_text())
    return report["environment"]["remote_cache"], stderr, time.monotonic() - started, peak_kib


@pytest.mark.parametrize("mode", ["drip-reads", "drip-writes"])
def test_a_server_that_drips_costs_one_timeout_per_answer_not_per_byte(mode, tmp_path, venv_python):
    # Before the fix each read waited up to the timeout, so a byte every 1.9 s kept a 2 s timeout
    # from ever firing: 46.8 s reading and 57 s writing on the demo.
    remote, stderr, _, _ = run_against(HostileRedis(mode), tmp_path, venv_python)
    assert remote["remote_errors"] == 1, stderr
    waited = remote["remote_read_seconds"] + remote["remote_write_seconds"]
    assert waited < TIMEOUT_S + 1.5, (remote, stderr)
    assert "no answer within the timeout" in stderr


def test_a_gigabyte_answer_is_refused_while_it_is_read(tmp_path, venv_python):
    # Before the fix the whole value was read before any check: 3.2 GB of RSS for a 1 GiB value.
    store = HostileRedis("huge")
    remote, stderr, _, peak_kib = run_against(store, tmp_path, venv_python)
    assert remote["remote_errors"] == 1 and "an answer larger than 64 MiB" in stderr, stderr
    assert peak_kib < 400 * 1024, peak_kib
    assert store.sent_bytes < 512 << 20  # the tool hung up; it did not read the rest


def test_a_password_the_server_echoes_is_not_printed(tmp_path, venv_python):
    remote, stderr, _, _ = run_against(HostileRedis("wrongpass"), tmp_path, venv_python)
    assert remote["remote_errors"] == 1
    assert "WRONGPASS invalid password '***'" in stderr, stderr
    assert PASSWORD not in stderr
