"""CI plumbing: GitHub annotations and step summary, baselines, sharding and merge, the action,
and the GitHub Action's definition (the pre-commit hook: test_pre_commit.py)."""
import concurrent.futures
import json
import subprocess

import pytest
import yaml

from conftest import BINARY, REPO, run_tool, write_manifest

pytestmark = pytest.mark.slow

GAMMA = '''\
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def gamma(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, libdevice.tgamma(tl.load(x_ptr + offs)))
'''

MANIFEST = '''\
[defaults]
targets = ["cuda:80", "hip:gfx942"]

[[kernel]]
name = "axpy"
target = "kernels.py:axpy"
signature = { x_ptr = "*fp32:16", y_ptr = "*fp32:16", out_ptr = "*fp32:16", n = "i32:16", a = "fp32" }
constants = { BLOCK = 1024 }
'''

GAMMA_ROW = '''
[[kernel]]
name = "gamma"
target = "kernels.py:gamma"
signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16" }
constants = { BLOCK = 128 }
'''


def test_github_annotations_and_step_summary(venv_python, tmp_path):
    project = tmp_path / "repo"
    write_manifest(project, MANIFEST + GAMMA_ROW, kernels_py=GAMMA)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    run = run_tool(["check", "--python", venv_python, "--github", "--markdown", tmp_path / "matrix.md"], cwd=project,
                   GITHUB_STEP_SUMMARY=summary, GITHUB_WORKSPACE=project)
    assert run.returncode == 1
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 1, run.stdout
    assert annotations[0].startswith("::error file=kernels.py,line=16,title=gamma on hip%3Agfx942%3A frontend-error")
    assert "has no attribute 'tgamma'" in annotations[0]
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, never replaced
    assert "| `gamma` |" in text and "❌ front:A" in text
    assert (tmp_path / "matrix.md").read_text() in text


def test_baseline_makes_only_new_failures_fail(venv_python, tmp_path):
    project = tmp_path / "repo"
    write_manifest(project, MANIFEST + GAMMA_ROW, kernels_py=GAMMA)
    baseline = tmp_path / "baseline.json"
    first = run_tool(["check", "--python", venv_python, "--write-baseline", baseline, "--json", tmp_path / "first.json"],
                     cwd=project)
    assert first.returncode == 0, first.stdout + first.stderr  # recording the baseline is a success
    recorded = json.loads(baseline.read_text())
    assert [(f["row"], f["target"]) for f in recorded["failures"]] == [("gamma", "hip:gfx942")]
    assert len(baseline.read_text().splitlines()) == 7  # one failure per line: reviewable diffs

    known = run_tool(["check", "--python", venv_python, "--baseline", baseline, "--json", tmp_path / "r.json"],
                     cwd=project)
    assert known.returncode == 0, known.stdout
    assert "1 failures already known, none fixed" in known.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["new"] == 0 and report["summary"]["failed"] == 1

    # A new failing row is new; the known one stays known; an earlier JSON report works as a baseline.
    write_manifest(project, MANIFEST + GAMMA_ROW + GAMMA_ROW.replace('"gamma"\n', '"gamma-big"\n').replace("128", "256"),
                   kernels_py=GAMMA)
    worse = run_tool(["check", "--python", venv_python, "--baseline", tmp_path / "r.json"], cwd=project)
    assert worse.returncode == 1
    assert "2 cells" not in worse.stdout and "(1 new)" in worse.stdout

    # The failing kernel fixed: the baseline lists it as fixed.
    write_manifest(project, MANIFEST + GAMMA_ROW, kernels_py=GAMMA.replace("libdevice.tgamma(", "tl.exp("))
    fixed = run_tool(["check", "--python", venv_python, "--baseline", baseline], cwd=project)
    assert fixed.returncode == 0
    assert "fixed: gamma on hip:gfx942" in fixed.stdout


# One row per failure kind of the table in src/core/cell.hpp that a single Triton can give
# (unsupported-target needs two releases: test_versions.py). Real compiles, and the kernel's own
# code for the limits (a constexpr_function that spins, one that hoards memory); the crash and the
# LLVM error are injected in backend stages, where no user code runs (base/faults.py).
KINDS_PY = """\
import triton
import triton.language as tl


@triton.constexpr_function
def spin(n):
    while True:
        pass


@triton.constexpr_function
def hoard(n):
    chunks = []
    while True:
        chunks.append(bytearray(64 << 20))


@triton.jit
def k_frontend(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.no_such_function(offs))


@triton.jit
def k_llvm(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


@triton.jit
def k_crash(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@triton.jit
def k_timeout(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, spin(BLOCK)), 1.0)


@triton.jit
def k_oom(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, hoard(BLOCK)), 1.0)
"""
KINDS_INJECT = "llir:raise@llvm,ttgir:crash@crash"


def kinds_manifest():
    x, block = '{ x_ptr = "*fp32:16" }', "{ BLOCK = 64 }"
    rows = [("frontend", "kinds.py:k_frontend", x, block, "cuda:80", ""),
            ("llvm", "kinds.py:k_llvm", x, block, "cuda:80", ""),
            ("crash", "kinds.py:k_crash", x, block, "cuda:80", ""),
            ("timeout", "kinds.py:k_timeout", x, block, "cuda:80", "timeout = 3"),
            ("oom", "kinds.py:k_oom", x, block, "cuda:80", 'max_rss = "1GiB"'),
            ("import", "broken.py:k", x, block, "cuda:80", ""),
            ("mlir", f"{REPO}/demo/kernels.py:dot_small",
             '{ a_ptr = "*i8:16", b_ptr = "*i8:16", c_ptr = "*i32:16", stride_am = "i32:16", '
             'stride_bk = "i32:16", stride_cm = "i32:16" }', "{ BLOCK_M = 32, BLOCK_N = 32, BLOCK_K = 32 }",
             "cuda:75", ""),
            ("assembler", f"{REPO}/demo/kernels.py:scatter_rows",
             '{ src_ptr = "*fp32:16", idx_ptr = "*i32:16", dst_ptr = "*fp32:16", M = "i32", N = "i32", '
             'stride_m = "i32:16" }', "{ BLOCK_M = 32, BLOCK_N = 64 }", "cuda:90", ""),
            ("launch", f"{REPO}/bench/h200/matmul.py:matmul",
             '{ a_ptr = "*fp16:16", b_ptr = "*fp16:16", c_ptr = "*fp16:16", M = "i32:16", N = "i32:16", '
             'K = "i32:16", stride_am = "i32:16", stride_bk = "i32:16", stride_cm = "i32:16" }',
             "{ stride_ak = 1, stride_bn = 1, stride_cn = 1, BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 64 }",
             "cuda:86", "options = { num_warps = 8, num_stages = 4 }")]
    return "".join(f'[[kernel]]\nname = "{name}"\ntarget = "{ref}"\nsignature = {sig}\nconstants = {consts}\n'
                   f'targets = ["{target}"]\n{extra}\n\n' for name, ref, sig, consts, target, extra in rows)


def test_a_baseline_matches_every_kind_of_failure_through_check_merge_and_report(venv_python, tmp_path):
    # Issue 42: a launch-limit cell in the baseline was "1 failed (1 new)" for ever, so every CI
    # job with one failed. Each kind a baseline records is matched the same way, by fingerprint.
    project = tmp_path / "repo"
    write_manifest(project, kinds_manifest(), kernels_py=None)
    (project / "kinds.py").write_text(KINDS_PY)
    (project / "broken.py").write_text('raise ImportError("this module cannot be imported")\n')
    check = ["check", "--python", venv_python, "--no-cache"]
    baseline, first = tmp_path / "baseline.json", tmp_path / "first.json"
    run = run_tool([*check, "--write-baseline", baseline, "--json", first], cwd=project,
                   TRITON_PORTCHECK_INJECT=KINDS_INJECT)
    assert run.returncode == 0, run.stdout + run.stderr
    recorded = {f["row"]: f["kind"] for f in json.loads(baseline.read_text())["failures"]}
    assert recorded == {"frontend": "frontend-error", "llvm": "llvm-error", "crash": "crash",
                        "timeout": "timeout", "oom": "oom", "import": "import-error", "mlir": "mlir-error",
                        "assembler": "assembler-error", "launch": "launch-limit"}, recorded

    # check: every verdict compiled again, every one known. Beside it, the two shards merged below
    # (independent runs, mostly waits on the time limit and the memory limit).
    again = tmp_path / "again.json"
    shards = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        runs = [pool.submit(run_tool, [*check, "--baseline", baseline, "--json", again], cwd=project,
                            TRITON_PORTCHECK_INJECT=KINDS_INJECT)]
        runs += [pool.submit(run_tool, [*check, "--shard", f"{k}/2", "--json", shard], cwd=project,
                             TRITON_PORTCHECK_INJECT=KINDS_INJECT) for k, shard in enumerate(shards, 1)]
        run = [r.result() for r in runs][0]
    assert run.returncode == 0, run.stdout + run.stderr
    assert "9 failed (0 new)" in run.stdout and "9 failures already known" in run.stdout, run.stdout
    cells = json.loads(again.read_text())["cells"]
    assert {(c["row"], c["new"], c["in_baseline"]) for c in cells} == {(row, False, True) for row in recorded}

    # merge: the shards' cells against the same baseline (and an earlier JSON report as one).
    for known in (baseline, first):
        run = run_tool(["merge", *shards, "--baseline", known, "-o", tmp_path / "merged.json"], cwd=tmp_path)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "9 failed (0 new)" in run.stdout, run.stdout

    # report: a report written without a baseline, read back with it.
    run = run_tool(["report", first, "--baseline", baseline, "--markdown", tmp_path / "m.md"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "9 failed (0 new)" in run.stdout, run.stdout
    assert "❌" not in (tmp_path / "m.md").read_text()


def test_writing_a_baseline_exits_0_unless_told_to_fail_and_fail_on_none_never_fails(tmp_path):
    """From the report of a run with a new failure (`report` renders it again, nothing compiles)."""
    report = tmp_path / "r.json"
    failing = {"schema_version": 1, "tool": {"name": "triton-portcheck", "version": "0.2.0"},
               "environment": {"triton": {"version": "3.9.0"}, "python": {"version": "3.11"}},
               "targets": ["hip:gfx942"], "rows": ["gamma"], "interrupted": False, "wall_s": 1.0,
               "cells": [{"kernel": "gamma", "row": "gamma", "target": "hip:gfx942", "status": "failed",
                          "kind": "frontend-error", "stage": "frontend", "message": "no tgamma",
                          "fingerprint": "0123456789ab", "new": True, "compile_s": 0.1, "wall_s": 0.2}]}
    report.write_text(json.dumps(failing))
    codes = {}
    for name, extra in {"plain": [], "write": ["--write-baseline", tmp_path / "b.json"],
                        "write-fail-on-new": ["--write-baseline", tmp_path / "b2.json", "--fail-on", "new"],
                        "fail-on-none": ["--fail-on", "none"]}.items():
        codes[name] = run_tool(["report", report, *extra], cwd=tmp_path).returncode
    assert codes == {"plain": 1, "write": 0, "write-fail-on-new": 1, "fail-on-none": 0}, codes
    assert (tmp_path / "b.json").exists() and (tmp_path / "b2.json").exists()
    bad = run_tool(["report", report, "--fail-on", "sometimes"], cwd=tmp_path)
    assert bad.returncode == 2 and "--fail-on" in bad.stderr
    help_text = run_tool(["check", "--help"], cwd=tmp_path).stdout
    assert "recording is a success: exit 0" in " ".join(help_text.split())


def test_every_report_flag_makes_its_missing_folder_and_refuses_a_path_through_a_file(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"schema_version": 1, "tool": {"name": "triton-portcheck", "version": "0.2.0"},
                                  "environment": {}, "targets": ["cuda:90"], "rows": [], "interrupted": False,
                                  "wall_s": 0.0, "cells": []}))
    flags = ["--json", "--junit", "--sarif", "--html", "--markdown", "--gitlab", "--write-baseline"]
    args = [arg for i, flag in enumerate(flags) for arg in (flag, tmp_path / "build" / f"deep{i}" / f"out{i}")]
    run = run_tool(["report", report, *args], cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert all((tmp_path / "build" / f"deep{i}" / f"out{i}").is_file() for i in range(len(flags)))
    (tmp_path / "a-file").write_text("")
    through = run_tool(["report", report, "--json", tmp_path / "a-file" / "sub" / "r.json"], cwd=tmp_path)
    assert through.returncode == 2, through.stderr
    assert "a-file is a file, not a folder" in through.stderr and len(through.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "a-file" / "sub").exists()


def test_bad_baseline_is_exit_2_before_compiling(venv_python, tmp_path):
    project = tmp_path / "repo"
    write_manifest(project, MANIFEST, kernels_py=GAMMA)
    (tmp_path / "bad.json").write_text('{"something": "else"}')
    run = run_tool(["check", "--python", venv_python, "--baseline", tmp_path / "bad.json"], cwd=project)
    assert run.returncode == 2 and run.stdout == ""
    assert "bad.json" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_shards_union_equals_the_unsharded_run_and_all_formats_come_from_the_merge(demo_run, demo_cache_home,
                                                                                   venv_python, tmp_path):
    # The shards' cells come from the demo run's cache: how the matrix is split and merged is the
    # subject here, and each cell's verdict is the one demo_run compiled.
    parts = []
    for k in (1, 2, 3):
        path = tmp_path / f"shard{k}.json"
        run = run_tool(["check", "--demo", "--python", venv_python, "--shard", f"{k}/3", "--json", path], cwd=tmp_path,
                       TRITON_PORTCHECK_HOME=demo_cache_home)
        assert run.returncode in (0, 1), run.stderr
        assert f"shard {k}/3" in run.stdout
        shard = json.loads(path.read_text())
        assert shard["summary"]["from_cache"] == len(shard["cells"]), run.stdout
        parts.append(path)
    sizes = [len(json.loads(p.read_text())["cells"]) for p in parts]
    assert sum(sizes) == 81 and max(sizes) - min(sizes) <= 3, sizes

    merged = tmp_path / "all.json"
    run = run_tool(["merge", *parts, "-o", merged], cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # merge exits like check: the demo has new failures
    assert "merged from 3 reports" in run.stdout
    report = json.loads(merged.read_text())
    def cells(r):
        return {(c["row"], c["target"]): (c["status"], c["kind"], c["stage"], c["fingerprint"]) for c in r["cells"]}
    assert cells(report) == cells(demo_run.report)
    assert [c["row"] for c in report["cells"]] == [c["row"] for c in demo_run.report["cells"]]  # matrix order

    outputs = {"--junit": "junit.xml", "--sarif": "out.sarif", "--html": "report.html", "--markdown": "m.md",
               "--json": "again.json", "--write-baseline": "base.json"}
    args = [a for flag, name in outputs.items() for a in (flag, tmp_path / name)]
    run = run_tool(["report", merged, *args], cwd=tmp_path)
    assert run.returncode == 0  # the demo has new failures, but writing a baseline is a success
    for name in outputs.values():
        assert (tmp_path / name).stat().st_size > 0, name
    assert cells(json.loads((tmp_path / "again.json").read_text())) == cells(report)

    # -q on every command that prints a matrix (issue 51): the summary line alone
    for command in (["merge", *parts, "-o", tmp_path / "quiet.json", "-q"], ["report", merged, "-q"]):
        quiet = run_tool(command, cwd=tmp_path)
        lines = quiet.stdout.splitlines()
        assert quiet.returncode == 1 and len(lines) == 2 and lines[0].startswith("81 cells"), quiet.stdout
        assert lines[1].startswith("Compile-only check"), quiet.stdout


def test_merge_refuses_reports_that_do_not_belong_together(venv_python, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run_tool(["check", "--demo", "--python", venv_python, "--shard", "1/2", "-t", "cuda:80", "--json", a], cwd=tmp_path)
    run_tool(["check", "--demo", "--python", venv_python, "--shard", "2/2", "-t", "cuda:90", "--json", b], cwd=tmp_path)
    run = run_tool(["merge", a, b, "-o", tmp_path / "m.json"], cwd=tmp_path)
    assert run.returncode == 2 and "different manifests or targets" in run.stderr
    assert not (tmp_path / "m.json").exists()
    run = run_tool(["merge", a, a, "-o", tmp_path / "m.json"], cwd=tmp_path)
    assert run.returncode == 2 and "shard 1/2 is given twice" in run.stderr, run.stderr
    other = json.loads(a.read_text())
    other["tool"]["version"] = "9.9.9"
    (tmp_path / "c.json").write_text(json.dumps(other))
    run = run_tool(["merge", a, tmp_path / "c.json", "-o", tmp_path / "m.json"], cwd=tmp_path)
    assert run.returncode == 2 and "9.9.9" in run.stderr


def test_merge_of_an_incomplete_shard_set_is_refused_unless_allowed_and_then_not_green(venv_python, tmp_path):
    # Issue 28: with the shard holding the failures lost, `merge` exited 0 and showed its cells as
    # "not checked on that target", so a CI merge job went green.
    shards = {}
    for spec in ("1/2", "2/2", "1/3"):
        shards[spec] = tmp_path / f"s{spec.replace('/', 'of')}.json"
        run = run_tool(["check", "--demo", "--python", venv_python, "--shard", spec, "-t", "cuda:80",
                        "--json", shards[spec]], cwd=tmp_path)
        assert run.returncode in (0, 1), run.stderr
    merged = tmp_path / "all.json"
    run = run_tool(["merge", shards["2/2"], "-o", merged], cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert "shard 1/2 missing" in run.stderr and "--allow-missing-shards" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and not merged.exists()

    run = run_tool(["merge", shards["1/2"], shards["1/3"], "-o", merged], cwd=tmp_path)
    assert run.returncode == 2 and "is shard 1/3" in run.stderr and "is shard 1/2" in run.stderr, run.stderr
    assert not merged.exists()

    run = run_tool(["merge", shards["2/2"], "--allow-missing-shards", "-o", merged], cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # unchecked cells are not a pass
    assert "INCOMPLETE: shard 1/2 missing" in run.stdout and "?" in run.stdout
    report = json.loads(merged.read_text())
    assert report["missing_shards"] == ["1/2"]
    run = run_tool(["report", merged, "--junit", tmp_path / "j.xml", "--sarif", tmp_path / "s.sarif"],
                   cwd=tmp_path)
    assert run.returncode == 1 and "shard 1/2 missing" in (tmp_path / "j.xml").read_text()
    assert json.loads((tmp_path / "s.sarif").read_text())["runs"][0]["invocations"][0]["executionSuccessful"] is False
    run = run_tool(["merge", shards["2/2"], "--allow-missing-shards", "--fail-on", "none", "-o", merged],
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    run = run_tool(["merge", shards["1/2"], shards["2/2"], "-o", merged], cwd=tmp_path)
    assert run.returncode == 1 and json.loads(merged.read_text())["missing_shards"] == []


def test_bad_shard_spec_is_exit_2(tmp_path):
    for spec in ("0/3", "4/3", "1/0", "x", "1/2/3"):
        run = run_tool(["check", "--demo", "--shard", spec], cwd=tmp_path)
        assert run.returncode == 2, spec
        assert "--shard" in run.stderr


def test_action_parses_and_references_only_what_exists():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    for name in ("manifest", "targets", "triton", "baseline", "args", "upload-sarif"):
        assert name in inputs, name
    text = (REPO / "action.yml").read_text()
    for name in inputs:
        assert f"inputs.{name}" in text, f"input {name} is never used"
    steps = action["runs"]["steps"]
    script = "\n".join(step.get("run", "") for step in steps)
    for flag in ("--github", "--junit", "--sarif", "--json", "--html", "--python", "--manifest"):
        assert flag in script, flag
    uses = [step["uses"] for step in steps if "uses" in step]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    # The tool comes from pip, built from the action's own folder: no apt-get, no hand-run cmake.
    assert "pip install" in script and "github.action_path" in script
    assert "apt-get" not in script and "cmake" not in script
    assert (REPO / "pyproject.toml").exists()
    assert any(u.startswith("actions/cache@") for u in uses)
    # Every flag it passes is one the tool has.
    help_text = subprocess.run([str(BINARY), "check", "--help"], capture_output=True, text=True).stdout
    for flag in ("--github", "--junit", "--sarif", "--json", "--html", "--python", "--manifest", "--baseline",
                 "--targets", "--shard", "--cache-url", "--cache-readonly"):
        assert flag in help_text, flag
