"""GitLab Code Quality (`--gitlab FILE`): the format added by following docs/architecture.md's
recipe "Add a report format". Checked against what GitLab documents for the artifact
(docs.gitlab.com ci/testing/code_quality: a JSON array of issues, each with description,
check_name, fingerprint, severity in info/minor/major/critical/blocker, location.path relative
to the repository and location.lines.begin)."""
import copy
import json
from pathlib import Path

import pytest

from conftest import REPO, run_tool
import test_ci_formats
from test_ci_formats import NASTY

demo_ci = test_ci_formats.demo_ci  # the demo's report, computed once

pytestmark = pytest.mark.slow

SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def gitlab_of(report_path, tmp_path, cwd=REPO, **env):
    out = tmp_path / "gl-code-quality-report.json"
    run = run_tool(["report", report_path, "--gitlab", out], cwd=cwd, **env)
    assert run.returncode in (0, 1), f"{run.stdout}\n{run.stderr}"
    return json.loads(out.read_text())


def test_one_issue_per_unexpected_failure_of_the_demo(demo_ci, tmp_path):  # noqa: F811
    issues = gitlab_of(demo_ci["json_path"], tmp_path)
    failing = [c for c in demo_ci["report"]["cells"] if c["status"] in ("failed", "launch")]
    assert failing and len(issues) == len(failing)
    assert len({i["fingerprint"] for i in issues}) == len(issues), "GitLab needs one per issue"
    for issue, cell in zip(issues, failing):
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in SEVERITIES and issue["severity"] == "major"  # all new
        assert issue["check_name"] == f"triton-portcheck/{cell['kind']}"
        assert issue["description"].startswith(f"{cell['row']} on {cell['target']} (Triton ")
        assert cell["message"] in issue["description"]
        location = issue["location"]
        assert location["path"] == "demo/kernels.py"  # relative to the checkout
        assert isinstance(location["lines"]["begin"], int) and location["lines"]["begin"] >= 1
    # Stable across runs: the same report gives the same fingerprints.
    assert [i["fingerprint"] for i in gitlab_of(demo_ci["json_path"], tmp_path)] == [
        i["fingerprint"] for i in issues]


def test_expected_and_known_failures_and_escaping(demo_ci, tmp_path):  # noqa: F811
    report = copy.deepcopy(demo_ci["report"])
    failing = [c for c in report["cells"] if c["status"] == "failed"]
    failing[0]["status"], failing[0]["new"] = "xfail", False  # expected: not an issue
    failing[1]["new"] = False  # in the baseline: still there, but minor
    failing[2]["message"] = NASTY
    path = tmp_path / "doctored.json"
    path.write_text(json.dumps(report))
    issues = gitlab_of(path, tmp_path)
    assert len(issues) == len(demo_ci["report"]["cells"]) - len(
        [c for c in demo_ci["report"]["cells"] if c["status"] not in ("failed", "launch")]) - 1
    by_row_target = {(i["description"].split(" on ")[0], i["description"].split(" on ")[1].split(" ")[0]): i
                     for i in issues}
    assert (failing[0]["row"], failing[0]["target"]) not in by_row_target
    assert by_row_target[(failing[1]["row"], failing[1]["target"])]["severity"] == "minor"
    assert NASTY in by_row_target[(failing[2]["row"], failing[2]["target"])]["description"]


def test_paths_relative_to_ci_project_dir(demo_ci, tmp_path):  # noqa: F811
    issues = gitlab_of(demo_ci["json_path"], tmp_path, cwd=tmp_path, CI_PROJECT_DIR=REPO / "demo")
    assert issues and {i["location"]["path"] for i in issues} == {"kernels.py"}
    outside = gitlab_of(demo_ci["json_path"], tmp_path, cwd=tmp_path)
    assert {Path(i["location"]["path"]).resolve() for i in outside} == {(REPO / "demo" / "kernels.py").resolve()}
