"""Two Triton releases side by side: check --triton current,3.8.0, diff between versions, targets
and runs, the IR diff, and site-packages inheritance."""
import json
import re

import pytest

from conftest import axpy_manifest, run_tool, write_manifest

# With test_releases.py and test_bisect.py: one xdist worker installs each release once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("triton-releases")]


@pytest.fixture(scope="session")
def triton_380(triton_release):
    """The 3.8.0 environment in the session's TRITON_PORTCHECK_HOME (about 240 MB from PyPI once)."""
    triton_release("3.8.0")
    return "3.8.0"


@pytest.fixture(scope="session")
def two_versions(triton_380, venv_python, tmp_path_factory):
    work = tmp_path_factory.mktemp("versions")
    json_path = work / "versions.json"
    run = run_tool(["check", "--demo", "--python", venv_python, "--triton", "current,3.8.0", "-t", "cuda:90,hip:gfx942",
                    "--save-ir", work / "ir", "--json", json_path], cwd=work, timeout=1800)
    assert run.returncode == 1, run.stdout + run.stderr
    return work, json_path, run


def cell(report, row, target, version):
    return next(c for c in report["cells"] if c["row"] == row and c["target"] == target and c["triton_version"] == version)


def test_the_demo_on_both_releases_as_they_really_behave(two_versions):
    _, json_path, run = two_versions
    report = json.loads(json_path.read_text())
    assert {t["version"] for t in report["environment"]["tritons"]} == {"3.9.0", "3.8.0"}
    assert len(report["cells"]) == 36
    assert "triton 3.9.0 (current):" in run.stdout and "triton 3.8.0:" in run.stdout
    for target in ("cuda:90", "hip:gfx942"):
        # Block pointers were removed in 3.9: fine in 3.8.0.
        assert cell(report, "rowsum_blockptr", target, "3.8.0")["status"] == "ok"
        assert cell(report, "rowsum_blockptr", target, "3.9.0")["kind"] == "frontend-error"
        # tl.atomic_poll arrived in 3.9.
        old = cell(report, "poll_flags", target, "3.8.0")
        assert old["kind"] == "frontend-error" and "atomic_poll" in old["message"]
        assert cell(report, "poll_flags", target, "3.9.0")["status"] == "ok"
    # Both reject TMA scatter on sm_90a, through different ptxas builds.
    assert cell(report, "scatter_rows", "cuda:90", "3.8.0")["message"].startswith("ptxas:")
    assert cell(report, "scatter_rows", "cuda:90", "3.9.0")["message"].startswith("ptxas-blackwell:")


def test_diff_between_the_versions(two_versions):
    work, json_path, _ = two_versions
    run = run_tool(["diff", json_path, "--versions", "3.8.0", "3.9.0", "--fail-on", "regressed"], cwd=work)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "triton 3.8.0 -> 3.9.0 on 18 cells" in run.stdout
    assert "regressed 2 · fixed 2 · fail differently 1" in run.stdout
    assert "rowsum_blockptr on cuda:90: ok -> frontend-error" in run.stdout
    assert "poll_flags on hip:gfx942: frontend-error in frontend -> ok" in run.stdout
    assert "gamma_ratio on cuda:90: cubin" in run.stdout  # the binary grew by more than 5%
    # Issue 42: ptxas's register count, from the real cubins of both releases: 32 in 3.8.0, 31 in
    # 3.9.0, 3% that a size threshold hid. And the compile time of what compiled on both sides.
    assert "register and spill changes\n  gamma_ratio on cuda:90: registers 32 -> 31 (-1)\n" in run.stdout
    assert re.search(r"compile time [\d.]+ s -> [\d.]+ s \([\d.]+x\) over the 12 cells that compiled", run.stdout)
    ir = run_tool(["diff", json_path, "--versions", "3.8.0", "3.9.0", "--ir", "ttgir"], cwd=work)
    assert ir.returncode == 0
    assert "--- " in ir.stdout and "+++ " in ir.stdout and "\n@@ -" in ir.stdout
    assert "%12" not in ir.stdout  # SSA numbers normalised


def test_diff_between_targets_and_between_runs(two_versions):
    work, json_path, _ = two_versions
    targets = run_tool(["diff", json_path, "--targets", "cuda:90", "hip:gfx942"], cwd=work)
    assert targets.returncode == 0 and "cuda:90 -> hip:gfx942" in targets.stdout
    assert "fixed" in targets.stdout  # scatter_rows fails on cuda:90 only
    runs = run_tool(["diff", json_path, json_path, "--fail-on", "regressed,fixed,fail-differently"], cwd=work)
    assert runs.returncode == 0, runs.stdout
    assert "regressed 0 · fixed 0 · fail differently 0 · unchanged 36" in runs.stdout
    bad = run_tool(["diff", json_path, "--versions", "3.8.0", "3.9.0", "--fail-on", "worse"], cwd=work)
    assert bad.returncode == 2 and "worse" in bad.stderr


def test_diff_of_a_run_under_one_release_against_a_run_under_another(two_versions):
    # Issue 28: a `--triton 3.8.0` run against a plain run compared 0 cells and passed
    # --fail-on regressed. Each report holds one release: the cells pair across the two.
    work, json_path, _ = two_versions
    report = json.loads(json_path.read_text())
    for name, version in (("old", "3.8.0"), ("new", "3.9.0")):
        part = dict(report, cells=[c for c in report["cells"] if c["triton_version"] == version])
        (work / f"{name}.json").write_text(json.dumps(part))
    run = run_tool(["diff", work / "old.json", work / "new.json", "--fail-on", "regressed"], cwd=work)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "on 18 cells" in run.stdout and "compared across Triton releases: 3.8.0 -> 3.9.0" in run.stdout
    assert "rowsum_blockptr on cuda:90: ok -> frontend-error" in run.stdout


def test_version_environments_inherit_the_invoking_site_packages(triton_380, venv_python, tmp_path):
    # yaml is in the project's .venv (pre-commit needs it), not in the 3.8.0 environment.
    kernels = "import yaml\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n" \
              "def k(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n"
    manifest = write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:90"]\n[[kernel]]\nname = "k"\n'
                              'target = "kernels.py:k"\nsignature = { x_ptr = "*fp32:16" }\nconstants = { BLOCK = 64 }\n',
                              kernels_py=kernels)
    inherited = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--triton", "3.8.0"], cwd=tmp_path)
    assert inherited.returncode == 0, inherited.stdout + inherited.stderr
    isolated = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--triton", "3.8.0",
                         "--no-inherit-site", "--no-cache"], cwd=tmp_path)
    assert isolated.returncode == 1 and "import:A" in isolated.stdout
    assert "No module named 'yaml'" in isolated.stdout


def test_markdown_and_html_show_one_row_per_version(two_versions):
    work, json_path, _ = two_versions
    run = run_tool(["report", json_path, "--markdown", work / "m.md", "--html", work / "r.html"], cwd=work)
    assert run.returncode == 1
    markdown = (work / "m.md").read_text()
    assert "| `rowsum_blockptr · triton 3.8.0` | ✅ ok | ✅ ok |" in markdown
    assert "| `rowsum_blockptr · triton 3.9.0` | ❌ front:" in markdown
    assert "rowsum_blockptr · triton 3.8.0" in (work / "r.html").read_text()


# ---- issue 14, item 5: a target only some of the requested releases can compile for ------------


def test_a_target_one_release_cannot_compile_for_is_its_cells_verdict(triton_380, venv_python, tmp_path):
    # Real differences: 3.9.0's ptxas knows sm_107a, 3.8.0's do not; 3.8.0's AMD backend lowers to
    # gfx1030 (RDNA2), 3.9.0's refuses it ("unsupported target").
    manifest = write_manifest(tmp_path, axpy_manifest(["cuda:80"]))
    out = {f: tmp_path / f"out.{f}" for f in ("json", "xml", "sarif", "md", "html")}
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache", "--triton",
                    "current,3.8.0", "-t", "cuda:107,hip:gfx1030", "--json", out["json"], "--junit", out["xml"],
                    "--sarif", out["sarif"], "--markdown", out["md"], "--html", out["html"]],
                   cwd=tmp_path, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    cells = {(c["target"], c["triton_version"]): c for c in json.loads(out["json"].read_text())["cells"]}
    assert cells[("cuda:107", "3.9.0")]["status"] == "ok"
    assert cells[("hip:gfx1030", "3.8.0")]["status"] == "ok"
    for target, version, words in (("cuda:107", "3.8.0", "sm_107a"), ("hip:gfx1030", "3.9.0", "unsupported target")):
        c = cells[(target, version)]
        assert c["status"] == "failed" and c["kind"] == "unsupported-target", c
        assert f"Triton {version}" in c["message"] and words in c["message"], c["message"]
    assert "target:" in run.stdout  # the matrix cell's label
    for f in ("xml", "sarif", "md", "html"):
        assert "unsupported-target" in out[f].read_text(), f
    # Issue 42: a baseline matches these cells as it matches any failure, in check and in report.
    baseline = tmp_path / "baseline.json"
    run = run_tool(["report", out["json"], "--write-baseline", baseline], cwd=tmp_path)
    assert run.returncode == 0 and "unsupported-target" in baseline.read_text(), run.stdout + run.stderr
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--triton", "current,3.8.0", "-t",
                    "cuda:107,hip:gfx1030", "--baseline", baseline], cwd=tmp_path, timeout=600)
    assert run.returncode == 0 and "2 failed (0 new)" in run.stdout, run.stdout + run.stderr
    run = run_tool(["report", out["json"], "--baseline", baseline], cwd=tmp_path)
    assert run.returncode == 0 and "2 failed (0 new)" in run.stdout, run.stdout + run.stderr


def test_a_target_no_requested_release_can_compile_for_is_exit_2(triton_380, venv_python, tmp_path):
    manifest = write_manifest(tmp_path, axpy_manifest(["cuda:80"]))
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache", "--triton",
                    "current,3.8.0", "-t", "hip:gfx1,hip:gfx803", "--json", json_path], cwd=tmp_path, timeout=600)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip() and "checked as `current`" not in line]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith("triton-portcheck: --targets: no requested Triton release can compile for "
                               "'hip:gfx1': "), lines[0]
    assert "3.9.0" in lines[0] and "3.8.0" in lines[0], lines[0]
    assert not json_path.exists()
