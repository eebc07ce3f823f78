"""Every format says what a passing cell proves, since reports are read away from the tool."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import axpy_manifest, run_tool, write_manifest

pytestmark = pytest.mark.slow

DISCLAIMER = ("Compile-only check, nothing was run on a GPU: a passing cell means Triton produced a binary for "
              "that target. It does not prove that the kernel launches on the device (its launch limits are "
              "predicted from the compiled metadata, not tried on a device), computes correct results, or "
              "performs well.")


def test_every_format_says_what_a_passing_cell_proves(venv_python, tmp_path):
    project = tmp_path / "repo"
    write_manifest(project, axpy_manifest(["cuda:80", "hip:gfx942"]))
    out = {name: tmp_path / f"report.{name}" for name in ("json", "junit", "sarif", "html", "markdown")}
    summary = tmp_path / "summary.md"
    run = run_tool(["check", "--python", venv_python, "--github",
                    *[arg for name, path in out.items() for arg in (f"--{name}", path)]],
                   cwd=project, GITHUB_STEP_SUMMARY=summary, GITHUB_WORKSPACE=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == DISCLAIMER
    assert json.loads(out["json"].read_text())["disclaimer"] == DISCLAIMER
    suite = ET.parse(out["junit"]).getroot().find("testsuite")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["disclaimer"] == DISCLAIMER
    sarif_run = json.loads(out["sarif"].read_text())["runs"][0]
    assert sarif_run["automationDetails"]["description"]["text"] == DISCLAIMER
    # The page's text travels in its JSON blob; the template shows the blob's sentence (test_html.py
    # checks it on screen in a real browser).
    html = out["html"].read_text()
    assert json.loads(re.search(r'id="data">(.*?)</script>', html, re.S).group(1))["report"]["disclaimer"] == DISCLAIMER
    assert "el('p', 'note', str(report.disclaimer))" in html
    for markdown in (out["markdown"].read_text(), summary.read_text()):
        assert f"\n\n*{DISCLAIMER}*\n\n" in markdown
    diff = run_tool(["diff", out["json"], out["json"]], cwd=project)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert diff.stdout.splitlines()[-1] == DISCLAIMER
