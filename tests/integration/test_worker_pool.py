"""The fork server: same results as one fresh interpreter per cell, replaced when it dies or grows."""
import json

import pytest

from conftest import EVERY_KIND_TARGETS, assert_no_leftovers, run_tool

pytestmark = pytest.mark.slow


def outcome(report):
    """What must not depend on how cells are isolated: status, kind, stage, fingerprint per cell."""
    return {(c["row"], c["target"]): (c["status"], c["kind"], c["stage"], c["fingerprint"]) for c in report["cells"]}


# Where fork and process isolation could part: a cell of every failure kind of the demo and the
# rows that compile there. A third of the matrix: a fresh process per cell is the slow part.
AGREEMENT_TARGETS = EVERY_KIND_TARGETS


def test_fork_and_process_isolation_agree_on_the_demo(demo_run, venv_python, tmp_path):
    assert demo_run.report["environment"]["options"]["isolation"] == "fork"
    kinds = {c["kind"] for c in demo_run.report["cells"]}
    chosen = [c for c in demo_run.report["cells"] if c["target"] in AGREEMENT_TARGETS]
    assert {c["kind"] for c in chosen} == kinds and None in kinds, kinds  # every failure kind, and ok cells
    reports = {}
    for isolation in ("fork", "process"):
        json_path = tmp_path / f"{isolation}.json"
        run = run_tool(["check", "--demo", "-t", ",".join(AGREEMENT_TARGETS), "--isolation", isolation,
                        "--no-cache", "--python", venv_python, "--json", json_path], cwd=tmp_path, timeout=900)
        assert run.returncode == 1, run.stderr
        reports[isolation] = json.loads(json_path.read_text())
        assert reports[isolation]["environment"]["options"]["isolation"] == isolation
        assert len(reports[isolation]["cells"]) == len(chosen) == 9 * len(AGREEMENT_TARGETS)
        assert_no_leftovers(run.tag)
    assert outcome(reports["process"]) == outcome(reports["fork"]) == outcome({"cells": chosen})
    # The point of the fork server: the same cells compile for a fraction of the time.
    assert reports["fork"]["wall_s"] < reports["process"]["wall_s"]


def test_fork_server_warms_up_once(demo_run):
    resources = demo_run.report["environment"]["resources"]
    assert resources["fork_servers_started"] == 1
    assert resources["cells_retried"] == 0
    assert resources["warm_up_s"] > 0
    # Warm children skip the ~0.5 s LLVM/backend initialisation a fresh process pays in the frontend.
    frontend = sorted(c["stages"]["frontend"] for c in demo_run.report["cells"])
    assert frontend[len(frontend) // 2] < 0.2, frontend


@pytest.mark.parametrize("fault, extra", [("server:exit@5", []), ("server:grow@5", ["--worker-max-rss", "1GiB"])])
def test_a_dead_or_bloated_server_is_replaced_and_its_cells_retried(demo_run, venv_python, tmp_path, fault, extra):
    targets = "cuda:80,hip:gfx942"
    # The reference: these targets' cells of the session's --no-cache run of the demo (the same
    # options, no fault injected), instead of a run of their own for each fault.
    reference = {"cells": [c for c in demo_run.report["cells"] if c["target"] in targets.split(",")]}
    assert len(reference["cells"]) == 18
    faulty = tmp_path / "faulty.json"
    # One cell to a child (TRITON_PORTCHECK_BATCH_CELLS=1): the fork the server dies on is then one
    # cell's, which the next server runs again (cells_retried). Where the load had formed a batch
    # of it instead (batches are sized from compile times), its cells were counted as left by the
    # batch and run again, and cells_retried was 0: a count that depended on the machine's load.
    run = run_tool(["check", "--demo", "-t", targets, "--no-cache", "--python", venv_python, "--json", faulty, *extra],
                   cwd=tmp_path, TRITON_PORTCHECK_INJECT=fault, TRITON_PORTCHECK_BATCH_CELLS="1")
    assert run.returncode == 1, run.stderr
    report = json.loads(faulty.read_text())
    resources = report["environment"]["resources"]
    assert resources["fork_servers_started"] == 2, resources
    assert resources["cells_retried"] >= 1, resources
    assert outcome(report) == outcome(reference)
    assert_no_leftovers(run.tag)
