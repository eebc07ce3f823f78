"""The fork server: same results as one fresh interpreter per cell, replaced when it dies or grows."""
import json

import pytest

from conftest import assert_no_leftovers, run_tool

pytestmark = pytest.mark.slow


def outcome(report):
    """What must not depend on how cells are isolated: status, kind, stage, fingerprint per cell."""
    return {(c["row"], c["target"]): (c["status"], c["kind"], c["stage"], c["fingerprint"]) for c in report["cells"]}


def test_fork_and_process_isolation_agree_on_the_demo(demo_run, venv_python, tmp_path):
    assert demo_run.report["environment"]["options"]["isolation"] == "fork"
    json_path = tmp_path / "process.json"
    run = run_tool(["check", "--demo", "--isolation", "process", "--no-cache", "--python", venv_python,
                    "--json", json_path], cwd=tmp_path, timeout=900)
    assert run.returncode == 1, run.stderr
    process = json.loads(json_path.read_text())
    assert process["environment"]["options"]["isolation"] == "process"
    assert len(process["cells"]) == 81
    assert outcome(process) == outcome(demo_run.report)
    # The point of the fork server: the 81 cells compile for a fraction of the time.
    assert demo_run.report["wall_s"] < process["wall_s"]
    assert_no_leftovers(run.tag)


def test_fork_server_warms_up_once(demo_run):
    resources = demo_run.report["environment"]["resources"]
    assert resources["fork_servers_started"] == 1
    assert resources["cells_retried"] == 0
    assert resources["warm_up_s"] > 0
    # Warm children skip the ~0.5 s LLVM/backend initialisation a fresh process pays in the frontend.
    frontend = sorted(c["stages"]["frontend"] for c in demo_run.report["cells"])
    assert frontend[len(frontend) // 2] < 0.2, frontend


@pytest.mark.parametrize("fault, extra", [("server:exit@5", []), ("server:grow@5", ["--worker-max-rss", "1GiB"])])
def test_a_dead_or_bloated_server_is_replaced_and_its_cells_retried(venv_python, tmp_path, fault, extra):
    targets = "cuda:80,hip:gfx942"
    reference = tmp_path / "reference.json"
    run = run_tool(["check", "--demo", "-t", targets, "--no-cache", "--python", venv_python, "--json", reference],
                   cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    faulty = tmp_path / "faulty.json"
    run = run_tool(["check", "--demo", "-t", targets, "--no-cache", "--python", venv_python, "--json", faulty, *extra],
                   cwd=tmp_path, TRITON_PORTCHECK_INJECT=fault)
    assert run.returncode == 1, run.stderr
    report = json.loads(faulty.read_text())
    resources = report["environment"]["resources"]
    assert resources["fork_servers_started"] == 2, resources
    assert resources["cells_retried"] >= 1, resources
    assert outcome(report) == outcome(json.loads(reference.read_text()))
    assert_no_leftovers(run.tag)
