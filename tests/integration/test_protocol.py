"""The binary and its Python worker check each other's protocol version (issue 13).

A worker folder from another install is simulated by copying the tool's files (python/, data/,
demo/) and changing the copy's protocol; TRITON_PORTCHECK_SHARE points the binary at it. Both
probe paths are exercised: the fork server's (--isolation fork) and the probe process's
(--isolation process, `targets`).
"""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, WORKER_DIR, run_tool, tool_env

SCHEMA = WORKER_DIR / "portcheck_worker" / "protocol.schema.json"
OURS = json.loads(SCHEMA.read_text())["x-protocol-version"]
OTHER = OURS + 1


def share_copy(tmp_path, edit):
    """The tool's files copied to tmp_path/share, with `edit(worker_folder)` applied."""
    share = tmp_path / "share"
    for part in ("python", "data", "demo"):
        shutil.copytree(REPO / part, share / part, ignore=shutil.ignore_patterns("__pycache__"))
    edit(share / "python" / "portcheck_worker")
    return share


def set_worker_protocol(version):
    """A worker of another install: it speaks `version` and refuses the tool's requests."""
    def edit(worker):
        schema = worker / "protocol.schema.json"
        text = schema.read_text()
        assert f'"x-protocol-version": {OURS},' in text
        schema.write_text(text.replace(f'"x-protocol-version": {OURS},', f'"x-protocol-version": {version},'))
    return edit


def answer_protocol(version):
    """A worker that does not check the tool's protocol (as an older one would) and answers the
    probe with `version`: the tool's own check must refuse it."""
    def edit(worker):
        handlers = worker / "server" / "probe.py"
        text = handlers.read_text()
        assert '"protocol": protocol.PROTOCOL_VERSION,' in text
        handlers.write_text(text.replace('"protocol": protocol.PROTOCOL_VERSION,', f'"protocol": {version},'))
    return edit


def assert_mismatch(run, share, worker_version, json_path=None):
    assert run.returncode == 3, (run.stdout, run.stderr)
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert line.startswith("triton-portcheck: protocol mismatch: "), line
    # Which versions, whose files, and the fix.
    assert f"triton-portcheck speaks protocol {OURS}" in line, line
    assert f"its worker at {share / 'python' / 'portcheck_worker'} speaks {worker_version}" in line, line
    assert "reinstall triton-portcheck" in line, line
    assert f"unset TRITON_PORTCHECK_SHARE, which points at {share}" in line, line
    assert "Traceback" not in run.stderr
    if json_path is not None:
        assert not json_path.exists()


@pytest.mark.parametrize("isolation", ["fork", "process"])
@pytest.mark.parametrize("edit, worker_version", [(set_worker_protocol(OTHER), OTHER),
                                                  (answer_protocol(OTHER + 5), OTHER + 5)],
                         ids=["worker-refuses", "tool-refuses"])
def test_check_refuses_a_worker_of_another_protocol(venv_python, tmp_path, isolation, edit, worker_version):
    share = share_copy(tmp_path, edit)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--demo", "-t", "cuda:90", "--python", venv_python, "--isolation", isolation,
                    "--json", json_path], cwd=tmp_path, timeout=300, TRITON_PORTCHECK_SHARE=share)
    assert_mismatch(run, share, worker_version, json_path)


def test_targets_refuses_a_worker_of_another_protocol_even_without_triton(tmp_path):
    # The mismatch is checked before Triton is imported: reinstalling comes first.
    python = shutil.which("python3")
    if python is None or subprocess.run([python, "-c", "import triton"], capture_output=True).returncode == 0:
        pytest.skip("no python3 without Triton on PATH")
    share = share_copy(tmp_path, set_worker_protocol(OTHER))
    run = run_tool(["targets", "--python", python], cwd=tmp_path, timeout=120, TRITON_PORTCHECK_SHARE=share)
    assert_mismatch(run, share, OTHER)


def test_the_same_protocol_is_accepted(venv_python, tmp_path):
    # A copy that changes nothing works, so the failures above are the protocol's alone.
    share = share_copy(tmp_path, lambda worker: None)
    run = run_tool(["targets", "--python", venv_python, "-t", "cuda:90"], cwd=tmp_path, timeout=300,
                   TRITON_PORTCHECK_SHARE=share)
    assert run.returncode == 0, run.stderr
    assert "cuda:90" in run.stdout


def worker(venv_python, tmp_path, request):
    request_path, result_path = tmp_path / "request.json", tmp_path / "result.json"
    request_path.write_text(json.dumps(request))
    env = tool_env(PYTHONPATH=WORKER_DIR)
    proc = subprocess.run([str(venv_python), "-m", "portcheck_worker", "probe", str(request_path),
                           str(result_path)], capture_output=True, text=True, env=env, timeout=300)
    return proc, result_path


def test_the_worker_refuses_a_request_of_another_protocol(venv_python, tmp_path):
    proc, result_path = worker(venv_python, tmp_path, {"protocol": OTHER, "targets": []})
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines() == [
        f"portcheck-worker: protocol mismatch: triton-portcheck speaks protocol {OTHER}, its worker at "
        f"{WORKER_DIR / 'portcheck_worker'} speaks {OURS}: the binary and the worker files come from "
        "different installs; reinstall triton-portcheck"]
    assert not result_path.exists()


def test_the_worker_answers_its_protocol(venv_python, tmp_path):
    proc, result_path = worker(venv_python, tmp_path, {"protocol": OURS, "targets": []})
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(result_path.read_text())
    assert answer["protocol"] == OURS
    assert Path(answer["worker"]) == WORKER_DIR / "portcheck_worker"
    # A tool from before the field was sent spoke the first protocol.
    proc, _ = worker(venv_python, tmp_path, {"targets": []})
    assert proc.returncode == (0 if OURS == 1 else 3), proc.stderr
