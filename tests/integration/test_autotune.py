"""Autotuned kernels judged as Triton's autotuner runs them (issue 49), with real Triton: capture
records which rows are the configs of one autotuned launch, and `check` skips a config that fails
on a target with what the release's autotuner skips, while the launch keeps another config. The
package (tests/fixtures/autotuned_pkg) has a kernel with one config too big for gfx942
(double_kernel), one whose every config is (negate_kernel), one whose second config is a frontend
error (square_kernel), one with early_config_prune (halve_kernel) and one whose second config
fails its static assertion (clamp_kernel)."""
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REPO, run_tool, write_manifest
from test_capture import capture, rows_of
import test_html
from test_html import browser_errors, css, needs_browser, open_page, td

browser = test_html.browser  # its Chromium fixture, shared by this module's browser test

# One worker runs the module: its captured package and check serve every test.
pytestmark = pytest.mark.xdist_group("autotune")

PACKAGE = REPO / "tests" / "fixtures" / "autotuned_pkg"
BOTH = "cuda:90,hip:gfx942"

# (row, target) -> status, for the capture --as both vendors: gfx942's 64-wide wavefronts make 32
# warps 2,048 threads, which Triton 3.4 on refuses as it loads the kernel (OutOfResources).
EXPECTED = {
    ("double_kernel[num_warps=4]", "cuda:90"): "ok",
    ("double_kernel[num_warps=4]", "hip:gfx942"): "ok",
    ("double_kernel[num_warps=32]", "cuda:90"): "ok",
    ("double_kernel[num_warps=32]", "hip:gfx942"): "skipped",
    ("negate_kernel[BLOCK=2048]", "cuda:90"): "ok",
    ("negate_kernel[BLOCK=2048]", "hip:gfx942"): "launch",
    ("negate_kernel[BLOCK=4096]", "cuda:90"): "ok",
    ("negate_kernel[BLOCK=4096]", "hip:gfx942"): "launch",
    ("square_kernel[SPLIT=1]", "cuda:90"): "ok",
    ("square_kernel[SPLIT=1]", "hip:gfx942"): "ok",
    ("square_kernel[SPLIT=3]", "cuda:90"): "failed",
    ("square_kernel[SPLIT=3]", "hip:gfx942"): "failed",
    ("halve_kernel[BLOCK=512]", "cuda:90"): "ok",
    ("halve_kernel[BLOCK=512]", "hip:gfx942"): "ok",
    ("halve_kernel[BLOCK=1024]", "cuda:90"): "ok",
    ("halve_kernel[BLOCK=1024]", "hip:gfx942"): "ok",
    ("clamp_kernel[BLOCK=256]", "cuda:90"): "ok",
    ("clamp_kernel[BLOCK=256]", "hip:gfx942"): "ok",
    ("clamp_kernel[BLOCK=8192]", "cuda:90"): "skipped",
    ("clamp_kernel[BLOCK=8192]", "hip:gfx942"): "skipped",
}


def copy_package(tmp_path):
    target = tmp_path / "autotuned_pkg"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "portcheck.toml"))
    return target


def statuses(report):
    return {(c["row"], c["target"]): c["status"] for c in report["cells"]}


@pytest.fixture(scope="module")
def captured_as_both(tmp_path_factory, venv_python):
    pkg = copy_package(tmp_path_factory.mktemp("autotune-record"))
    run = capture(pkg, venv_python, "--mode", "record", "--as", BOTH)
    assert run.returncode == 0, run.stderr
    return pkg


@pytest.fixture(scope="module")
def checked(captured_as_both, venv_python):
    pkg = captured_as_both
    run = run_tool(["check", "--python", venv_python, "-t", BOTH, "--no-cache", "--json", "r.json", "--junit",
                    "j.xml", "--sarif", "s.sarif", "--markdown", "m.md", "--gitlab", "g.json", "--html", "h.html",
                    "--write-baseline", "b.json", "--fail-on", "new", "--github"], cwd=pkg, timeout=600)
    return pkg, run


@pytest.mark.parametrize("mode", ["interpret", "record"])
def test_capture_names_the_configs_of_each_autotuned_launch(tmp_path, venv_python, mode):
    pkg = copy_package(tmp_path)
    run = capture(pkg, venv_python, "--mode", mode)
    assert run.returncode == 0, run.stderr
    rows = rows_of(pkg / "portcheck.toml")
    # Every config of each kernel's one autotuned launch, and only those: early_config_prune
    # dropped halve_kernel's 4096-element config before the launch benchmarked anything.
    assert {name: row.get("autotune") for name, row in rows.items()} == {name: "launch-1" for name, _ in EXPECTED}
    assert "halve_kernel[BLOCK=4096]" not in rows


def test_check_judges_each_launch_as_its_autotuner_runs_it(checked):
    pkg, run = checked
    report = json.loads((pkg / "r.json").read_text())
    assert statuses(report) == EXPECTED
    cells = {(c["row"], c["target"]): c for c in report["cells"]}
    skipped = cells[("double_kernel[num_warps=32]", "hip:gfx942")]
    assert skipped["new"] is False and skipped["kind"] == "launch-limit"
    assert skipped["autotuner"] == {"skips": True, "raises": "OutOfResources"}
    assert skipped["autotuned"]["launch"] == "launch-1"
    assert (skipped["autotuned"]["configs"], skipped["autotuned"]["remaining"]) == (2, 1)
    assert cells[("clamp_kernel[BLOCK=8192]", "cuda:90")]["autotuner"]["raises"] == "CompileTimeAssertionFailure"
    # No config of negate_kernel is left on gfx942: the launch fails, and says why.
    for row in ("negate_kernel[BLOCK=2048]", "negate_kernel[BLOCK=4096]"):
        cell = cells[(row, "hip:gfx942")]
        assert cell["new"] is True and cell["autotuned"]["remaining"] == 0
        assert "no config of launch launch-1 is left on hip:gfx942" in cell["autotuned"]["note"]
    # A frontend error reaches the user's call: the autotuner does not catch it.
    frontend = cells[("square_kernel[SPLIT=3]", "cuda:90")]
    assert frontend["new"] is True and frontend["autotuner"] == {"skips": False, "raises": "CompilationError"}
    assert report["summary"]["skipped"] == 3
    assert run.returncode == 1  # negate_kernel and square_kernel, not the skipped configs
    assert "3 configs left to the autotuner" in run.stdout
    assert "double_kernel[num_warps=32]  ok       skip" in run.stdout


def test_every_format_shows_a_skipped_config_as_information(checked):
    pkg, run = checked
    skipped_case = next(tc for tc in ET.parse(pkg / "j.xml").getroot().iter("testcase")
                        if (tc.get("classname"), tc.get("name")) == ("double_kernel[num_warps=32]",
                                                                     "hip:gfx942 triton 3.9.0"))
    assert skipped_case.find("failure") is None
    assert skipped_case.find("skipped").get("message").startswith("config skipped by the autotuner: launch-limit")
    sarif = json.loads((pkg / "s.sarif").read_text())["runs"][0]
    notes = [r for r in sarif["results"] if r["ruleId"] == "portcheck/autotuner-skipped-config"]
    assert len(notes) == 3 and {r["level"] for r in notes} == {"note"}
    rule = sarif["tool"]["driver"]["rules"][notes[0]["ruleIndex"]]
    assert rule["id"] == "portcheck/autotuner-skipped-config"
    assert rule["defaultConfiguration"]["level"] == "note"
    gitlab = json.loads((pkg / "g.json").read_text())
    assert sorted(i["severity"] for i in gitlab if "left to the autotuner" in i["description"]) == ["info"] * 3
    markdown = (pkg / "m.md").read_text()
    assert "⏭️ skip" in markdown and "⏭️ marks 3 configs of autotuned launches" in markdown
    baseline = json.loads((pkg / "b.json").read_text())
    assert {(f["row"], f["target"]) for f in baseline["failures"]} == {
        k for k, v in EXPECTED.items() if v in ("failed", "launch")}
    annotations = run.stdout.splitlines()
    assert sum(line.startswith("::error ") for line in annotations) == 4
    assert any(line.startswith("::notice title=triton-portcheck%3A autotuned configs skipped::3 config(s)")
               for line in annotations)


@needs_browser
def test_the_html_page_shows_a_skipped_config_and_why(browser, checked):
    pkg, _ = checked
    open_page(browser, pkg / "h.html")
    cell = td(browser, "double_kernel[num_warps=32]", "hip:gfx942")
    assert cell.text == "skip" and "s-skipped" in cell.get_attribute("class")
    cell.click()
    fields = css(browser, "#d-fields")[0].get_attribute("textContent")
    assert "launch-1: 1 of 2 configs remain on hip:gfx942" in fields, fields
    assert "left to the autotuner, which skips a config raising OutOfResources" in fields
    assert not browser_errors(browser)


def test_process_isolation_gives_the_same_verdicts(checked, venv_python):
    """A fast path is exact by construction: one process per cell judges gfx942's launches alike."""
    pkg, _ = checked
    run = run_tool(["check", "--python", venv_python, "-t", "hip:gfx942", "--no-cache", "--isolation", "process",
                    "--json", "p.json"], cwd=pkg, timeout=600)
    assert run.returncode == 1, run.stderr
    assert statuses(run.json(pkg / "p.json")) == {k: v for k, v in EXPECTED.items() if k[1] == "hip:gfx942"}


def test_shards_keep_a_launch_together_and_merge_to_the_same_verdicts(checked, venv_python):
    pkg, _ = checked
    for k in (1, 2):
        run = run_tool(["check", "--python", venv_python, "-t", BOTH, "--shard", f"{k}/2", "--json", f"shard{k}.json"],
                       cwd=pkg, timeout=600)
        assert run.returncode in (0, 1), run.stderr
        cells = run.json(pkg / f"shard{k}.json")["cells"]
        launches = {(c["kernel"], c["target"]) for c in cells}
        # Each (kernel's launch, target) is whole in the shard that has it.
        for kernel, target in launches:
            expected = {row for row, t in EXPECTED if t == target and row.startswith(kernel + "[")}
            assert {c["row"] for c in cells if c["kernel"] == kernel and c["target"] == target} == expected
    merged = run_tool(["merge", "shard1.json", "shard2.json", "-o", "merged.json"], cwd=pkg)
    assert merged.returncode == 1, merged.stderr
    assert statuses(merged.json(pkg / "merged.json")) == EXPECTED


def test_diff_says_how_many_configs_remain(checked):
    pkg, _ = checked
    run = run_tool(["diff", "r.json", "--targets", "cuda:90", "hip:gfx942", "--fail-on", "configs-remaining"],
                   cwd=pkg)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "autotuned launches whose configs remaining changed" in run.stdout
    assert "launch launch-1: 2 -> 1 of 2 configs remain (down to one)" in run.stdout
    assert "launch launch-1: 2 -> 0 of 2 configs remain (none: it fails)" in run.stdout


# double_kernel's launch written by hand: its two configs are the variants (what tells them apart
# is theirs, so the [[kernel]] is no row of its own), for gfx942. Also test_releases.py's.
HAND_WRITTEN_LAUNCH = """
[defaults]
targets = ["hip:gfx942"]

[[kernel]]
name = "double"
target = "kernels.py:double_kernel"
signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16", n = "i32" }
autotune = "tiles"
  [[kernel.variant]]
  name = "w4"
  constants = { BLOCK = 1024 }
  options = { num_warps = 4 }
  [[kernel.variant]]
  name = "w32"
  constants = { BLOCK = 1024 }
  options = { num_warps = 32 }
"""


def test_a_hand_written_launch_is_judged_alike_and_a_bad_name_is_refused(tmp_path, venv_python):
    kernels = (PACKAGE / "autotuned_pkg" / "kernels.py").read_text()
    manifest = write_manifest(tmp_path, HAND_WRITTEN_LAUNCH + """
[[kernel]]
name = "alone"
target = "kernels.py:double_kernel"
signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16", n = "i32" }
constants = { BLOCK = 1024 }
options = { num_warps = 32 }
""", kernels_py=kernels)
    run = run_tool(["check", "--python", venv_python, "--no-cache", "--json", "r.json"], cwd=tmp_path)
    assert statuses(run.json(tmp_path / "r.json")) == {
        ("double[w4]", "hip:gfx942"): "ok", ("double[w32]", "hip:gfx942"): "skipped",
        ("alone", "hip:gfx942"): "launch"}  # a row launched as it is: its own verdict
    assert run.returncode == 1
    bad = manifest.read_text().replace('autotune = "tiles"', "autotune = 3")
    manifest.write_text(bad)
    run = run_tool(["check", "--python", venv_python], cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "triton-portcheck: portcheck.toml:9: kernel 'double'.autotune: expected the name of an autotuned launch, "
        'or a list of them, such as "matmul-1"']
