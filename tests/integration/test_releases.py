"""Triton 3.0 to 3.3 as releases like any other (issue 31), on real releases from the package index:
3.0.0 (the oldest, the 3.0-3.1 family) and 3.2.0 (the 3.2 family), each installed once per session
with `env add` (about 200 MB of wheel each), beside the test venv's current release. What each
release does differently lives in python/portcheck_worker/compile/releases.py; these tests hold it
to what each release's own JIT does.
"""
import json
import os
import re
import subprocess

import pytest

from conftest import HELPERS, REPO, WORKER_DIR, run_tool, write_manifest
from test_autotune import HAND_WRITTEN_LAUNCH

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("triton-releases")]

# The old releases CI installs: the oldest and one of the next family. PORTCHECK_TEST_RELEASES
# widens the JIT round trip below to more (3.3.1, 3.4.0, 3.5.1, 3.6.0: a release of each family;
# 3.6's HIP JIT imports torch to judge a pointer).
OLD = ("3.0.0", "3.2.0")
ROUND_TRIP = tuple(os.environ.get("PORTCHECK_TEST_RELEASES", ",".join(OLD)).split(","))
FIXTURES = REPO / "tests" / "fixtures" / "releases"


def worker_python(python, *args):
    env = {**os.environ, "PYTHONPATH": str(WORKER_DIR)}
    return subprocess.run([str(python), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def test_each_release_has_its_family_and_2x_is_refused(venv_python):
    script = ("from portcheck_worker.compile import releases\n"
              "for v in ['3.0.0', '3.1.0', '3.2.0', '3.3.0', '3.3.1', '3.4.0', '3.5.1', '3.6.0', '3.9.0',"
              " '3.10.0+git1a2b', '3.4.0rc1']:\n"
              "    print(v, releases.for_version(v).family)\n"
              "try:\n"
              "    releases.for_version('2.3.1')\n"
              "except releases.UnsupportedRelease as e:\n"
              "    print('refused:', e)\n")
    run = worker_python(venv_python, "-c", script)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:11] == ["3.0.0 3.0-3.1", "3.1.0 3.0-3.1", "3.2.0 3.2", "3.3.0 3.3", "3.3.1 3.3", "3.4.0 3.4",
                          "3.5.1 3.5", "3.6.0 3.6", "3.9.0 3.7+", "3.10.0+git1a2b 3.7+", "3.4.0rc1 3.4"]
    assert lines[11].startswith("refused: Triton 2.3.1 is older than 3.0.0")


@pytest.mark.parametrize("version", [*ROUND_TRIP, "current"])
@pytest.mark.parametrize("target", [("cuda", "90", "32"), ("hip", "gfx942", "64")])
def test_the_worker_compiles_exactly_what_the_jit_of_each_release_would(triton_release, venv_python, version,
                                                                       target):
    """Launches with a folded 1 and a None, with an unaligned pointer, and with a constexpr 1 and
    an argument marked do_not_specialize: the specialisation the worker compiles, from the
    launch's record and from the manifest row, hashes (signature, constants, attributes) as the
    ASTSource the release's JIT builds. And the interpreter's launches reach the one entry point
    capture wraps."""
    python = venv_python if version == "current" else triton_release(version)
    run = worker_python(python, HELPERS / "adapter_roundtrip.py", *target)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    for launch in result["launches"]:
        assert launch["ours"] == launch["jit"] and launch["row"] == launch["jit"], launch
    assert result["interpreter_entry"], result
    folded = result["launches"][0]["common"]
    assert folded["signature"]["stride"] == folded["signature"]["bias_ptr"] == "constexpr"
    assert [[3], [4], [6]] == folded["constant_keys"] and folded["constant_vals"] == [1, None, 256]


def cell(report, row, target, version):
    return next(c for c in report["cells"]
                if c["row"] == row and c["target"] == target and c["triton_version"] == version)


@pytest.fixture(scope="module")
def demo_on_releases(triton_release, venv_python, tmp_path_factory):
    for version in OLD:
        triton_release(version)
    work = tmp_path_factory.mktemp("releases")
    run = run_tool(["check", "--demo", "--python", venv_python, "--triton", "3.0.0,3.2.0,current", "-t",
                    "cuda:80,cuda:90,cuda:120,hip:gfx942,hip:gfx950", "--json", work / "r.json"], cwd=work,
                   timeout=1800)
    assert run.returncode == 1, run.stdout + run.stderr
    return run, json.loads((work / "r.json").read_text())


def test_the_demo_on_3_0_and_3_2_as_they_really_behave(demo_on_releases):
    run, report = demo_on_releases
    assert {t["version"] for t in report["environment"]["tritons"]} == {"3.0.0", "3.2.0", "3.9.0"}
    assert "triton 3.0.0:" in run.stdout and "triton 3.2.0:" in run.stdout
    for version in OLD:
        # Their ptxas (CUDA 12.4) knows no sm_120: a verdict of those cells, not a refused run.
        blackwell = cell(report, "axpy", "cuda:120", version)
        assert blackwell["kind"] == "unsupported-target" and "sm_120" in blackwell["message"]
        for target in ("cuda:80", "cuda:90", "hip:gfx942"):
            assert cell(report, "axpy", target, version)["status"] == "ok"
            assert cell(report, "rowsum_blockptr", target, version)["status"] == "ok"
            # The demo's guard needs triton.language.target_info (3.5): its fallback says so.
            guarded = cell(report, "gamma_ratio_guarded", target, version)
            assert guarded["kind"] == "frontend-error"
            assert "needs triton.language.target_info (Triton 3.5 or later)" in guarded["message"]
            # make_tensor_descriptor and atomic_poll came later.
            assert "make_tensor_descriptor" in cell(report, "scatter_rows", target, version)["message"]
            assert "atomic_poll" in cell(report, "poll_flags", target, version)["message"]
        # fp8e4nv: 3.0 asserts allow_fp8e4nv in a cast (sm_89+ only, never AMD); 3.2 lists the dtypes.
        assert cell(report, "quantize_fp8", "cuda:90", version)["status"] == "ok"
        assert cell(report, "quantize_fp8", "cuda:80", version)["kind"] == "frontend-error"
    assert "fp8e4nv data type is not supported on CUDA arch < 89" in \
        cell(report, "quantize_fp8", "hip:gfx942", "3.0.0")["message"]
    assert "The supported fp8 dtypes are ('fp8e4b8', 'fp8e5', 'fp8e5b16')" in \
        cell(report, "quantize_fp8", "hip:gfx942", "3.2.0")["message"]
    # The HIP libdevice without tgamma: refused by 3.0's dispatcher, missing from 3.2's module.
    assert "does not provide support for `tgamma`" in cell(report, "gamma_ratio", "hip:gfx942", "3.0.0")["message"]
    assert "has no attribute 'tgamma'" in cell(report, "gamma_ratio", "hip:gfx942", "3.2.0")["message"]
    # gfx950: 3.0's AMD backend refuses it, 3.2's compiles for it.
    assert cell(report, "axpy", "hip:gfx950", "3.0.0")["kind"] == "unsupported-target"
    assert cell(report, "axpy", "hip:gfx950", "3.2.0")["status"] == "ok"
    # The static pre-checks read each release's own tables: every prediction came true.
    assert "predicted but compiled anyway" not in run.stdout


def test_diff_between_two_old_releases(demo_on_releases, tmp_path):
    run, report = demo_on_releases
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    diff = run_tool(["diff", path, "--versions", "3.0.0", "3.2.0"], cwd=tmp_path)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "triton 3.0.0 -> 3.2.0 on 45 cells" in diff.stdout
    # gfx950: refused by 3.0's AMD backend, compiled by 3.2's.
    assert re.search(r"axpy on hip:gfx950: unsupported-target[^\n]* -> ok", diff.stdout), diff.stdout


def test_an_old_release_as_current_runs_check_and_targets(triton_release, tmp_path):
    python = triton_release("3.0.0")
    run = run_tool(["check", "--demo", "--python", python, "-t", "cuda:90,cuda:100,hip:gfx942", "--json",
                    tmp_path / "r.json"], cwd=tmp_path, timeout=900)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "triton 3.0.0" in run.stdout.splitlines()[0]
    report = json.loads((tmp_path / "r.json").read_text())
    assert cell(report, "axpy", "cuda:100", "3.0.0")["kind"] == "unsupported-target"
    assert cell(report, "dot_small[fp16]", "hip:gfx942", "3.0.0")["status"] == "ok"
    targets = run_tool(["targets", "--python", python], cwd=tmp_path)
    assert targets.returncode == 0, targets.stdout + targets.stderr
    assert re.search(r"cuda:90 +32 +ptxas \(CUDA 12\.4", targets.stdout), targets.stdout
    assert re.search(r"cuda:120 +- +cannot compile: sm_120 is not an architecture", targets.stdout)
    # Before 3.4 AMD code objects are linked by an ld.lld outside the wheel: which one is shown.
    assert re.search(r"hip:gfx942 +64 +ld\.lld", targets.stdout), targets.stdout


@pytest.mark.parametrize("version, scratch", [("3.2.0", []), ("current", ["global_scratch", "profile_scratch"])])
def test_export_lists_the_parameters_the_binary_really_has(triton_release, venv_python, tmp_path, version, scratch):
    python = venv_python if version == "current" else triton_release(version)
    run = run_tool(["export", "--demo", "axpy", "-t", "cuda:90", "-o", tmp_path / "out", "--python", python],
                   cwd=tmp_path, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    folder = tmp_path / "out" / "axpy" / "cuda_90"
    launch = json.loads((folder / "launch.json").read_text())
    assert [p["name"] for p in launch["params"] if p["kind"] != "argument"] == scratch
    ptx = (folder / "axpy.ptx").read_text()
    assert len(re.findall(r"\.param \.", ptx.split(".entry", 1)[1].split(")", 1)[0])) == len(launch["params"])
    assert f"num_params = {len(launch['params'])};" in (folder / "launcher.h").read_text()


def test_capture_records_the_same_rows_with_every_release(triton_release, venv_python, tmp_path):
    """No torch in the old releases' environments: the fixture launches with stand-ins for tensors."""
    manifests = {}
    for version in (*OLD, "current"):
        python = venv_python if version == "current" else triton_release(version)
        out = tmp_path / f"{version}.toml"
        run = run_tool(["capture", "--mode", "record", "-o", out, "--", python, FIXTURES / "launch_fakes.py"],
                       cwd=FIXTURES, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "3 distinct launch(es) of 1 kernel(s) -> 3 row(s)" in run.stderr
        manifests[version] = out.read_text().split("\n", 1)[1]  # past the line naming the command
    assert manifests["3.0.0"] == manifests["3.2.0"] == manifests["current"]
    assert 'constants = { stride = 1, bias_ptr = { none = true } }' in manifests["current"]


@pytest.mark.parametrize("args", [["env", "add", "2.3.1"], ["check", "--demo", "--triton", "2.3.1"],
                                  ["bisect", "axpy", "--demo", "-t", "cuda:90", "--from", "2.3.1"]])
def test_releases_before_3_0_are_refused_in_one_line(venv_python, tmp_path, args):
    run = run_tool([*args, "--python", venv_python], cwd=tmp_path, timeout=300)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Triton 2.3.1 is older than 3.0.0, the oldest release triton-portcheck compiles with" in run.stderr
    assert run.stderr.count("\n") == 1, run.stderr


def test_an_environment_with_triton_2_says_so_and_exits_3(venv_python, tmp_path):
    fake = tmp_path / "site" / "triton"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "2.3.1"\n')
    run = run_tool(["check", "--demo", "--python", venv_python], cwd=tmp_path, timeout=300,
                   PYTHONPATH=tmp_path / "site")
    assert run.returncode == 3, run.stdout + run.stderr
    assert "Triton 2.3.1 is older than 3.0.0" in run.stderr and "use Triton 3.0.0 or later" in run.stderr


def test_a_reproducer_says_where_its_failure_is_gone_and_bisect_finds_the_release(triton_release, venv_python,
                                                                                  tmp_path):
    """Block pointers compile up to 3.8.0 and are refused by 3.9.0: the file written with the
    current release runs under 3.2.0 and 3.8.0 (their own compile forms) and says it no longer
    reproduces; `bisect --repro` (which runs it under 3.8.0 and 3.9.0) finds 3.9.0. Written with 3.0.0, gamma_ratio's file fails
    differently under the current release (its message changed in 3.2): `repro --verify`."""
    out = tmp_path / "blockptr.py"
    run = run_tool(["repro", "rowsum_blockptr", "--demo", "-t", "cuda:90", "--python", venv_python, "-o", out],
                   cwd=tmp_path)
    assert run.returncode == 0 and "reproduces 547f998e6596" in run.stdout, run.stdout + run.stderr
    fixed = subprocess.run([str(triton_release("3.2.0")), str(out)], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "no longer reproduces: Triton 3.2.0 for cuda:90 compiles it" in fixed.stdout
    triton_release("3.8.0")
    bisect = run_tool(["bisect", "--repro", out, "--from", "3.8.0", "--python", venv_python], cwd=tmp_path)
    assert bisect.returncode == 0, bisect.stdout + bisect.stderr
    assert "first release with the new verdict: 3.9.0 (the last with the old: 3.8.0)" in bisect.stdout

    old = tmp_path / "gamma_300.py"
    run = run_tool(["repro", "gamma_ratio", "--demo", "-t", "hip:gfx942", "--triton", "3.0.0", "--python",
                    venv_python, "-o", old], cwd=tmp_path)
    assert run.returncode == 0 and "reproduces 3e45587740d9" in run.stdout, run.stdout + run.stderr
    now = run_tool(["repro", "--verify", old, "--python", venv_python], cwd=tmp_path)
    assert now.returncode == 1 and "fails differently: frontend-error in frontend [d156103061eb]" in now.stdout


def test_a_reproducer_says_how_an_older_compiler_crashed(triton_release, venv_python, tmp_path):
    """Triton 3.0.0 does not know sm_120 and aborts in TritonGPU's AccelerateMatmul (an assert):
    the file, written with the current release for a launch-limit cell, runs its compile in a child
    and says the signal, the stage and what was printed, instead of dying with it."""
    (tmp_path / "portcheck.toml").write_text(
        '[[kernel]]\nname = "mm"\ntarget = "' + str(REPO / "bench" / "h200" / "matmul.py") + ':matmul"\n'
        'signature = { a_ptr = "*fp16:16", b_ptr = "*fp16:16", c_ptr = "*fp16:16", M = "i32:16", N = "i32:16", '
        'K = "i32:16", stride_am = "i32:16", stride_bk = "i32:16", stride_cm = "i32:16" }\n'
        'constants = { stride_ak = 1, stride_bn = 1, stride_cn = 1, BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 64 }\n'
        'options = { num_warps = 8, num_stages = 4 }\n')
    out = tmp_path / "mm.py"
    run = run_tool(["repro", "mm", "-t", "cuda:120", "--python", venv_python, "-o", out], cwd=tmp_path)
    assert run.returncode == 0 and "(launch-limit in launch)" in run.stdout, run.stdout + run.stderr
    crashed = subprocess.run([str(triton_release("3.0.0")), str(out)], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300)
    assert crashed.returncode == 1, crashed.stdout + crashed.stderr
    assert "fails differently: Triton 3.0.0 for cuda:120 crashed (SIGABRT) in stage ttgir" in crashed.stdout
    assert "computeCapability not supported" in crashed.stderr


# What each release family's autotuner skips and its loader refuses, as read from its own source
# (compile/autotune_rules.py): 3.3 added PTXASError and the tensor-memory check, 3.4 the threads one.
AUTOTUNER_RULES = {
    (3, 0): (["CompileTimeAssertionFailure", "OutOfResources"], ["shared memory"]),
    (3, 3): (["CompileTimeAssertionFailure", "OutOfResources", "PTXASError"], ["shared memory", "tensor memory"]),
    (3, 4): (["CompileTimeAssertionFailure", "OutOfResources", "PTXASError"],
             ["shared memory", "tensor memory", "threads"]),
}


@pytest.mark.parametrize("version", [*ROUND_TRIP, "current"])
def test_what_each_releases_autotuner_skips_is_read_from_that_release(triton_release, venv_python, version):
    python = venv_python if version == "current" else triton_release(version)
    script = ("import json, triton\nfrom portcheck_worker.compile import autotune_rules as a\n"
              "print(json.dumps([triton.__version__, sorted(c.__name__ for c in a.skipped_exceptions()),"
              " sorted(a.load_checks())]))")
    run = worker_python(python, "-c", script)
    assert run.returncode == 0, run.stderr
    release, skipped, checks = json.loads(run.stdout)
    family = max(f for f in AUTOTUNER_RULES if f <= tuple(map(int, release.split(".")[:2])))
    assert (skipped, checks) == AUTOTUNER_RULES[family]


AUTOTUNED = '''
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)
'''


def test_a_config_too_wide_for_gfx942_is_skipped_by_3_9_and_breaks_the_launch_on_3_2(triton_release, venv_python,
                                                                                     tmp_path):
    """Triton 3.2 loads a kernel without checking its threads (3.4 added the check): 2,048 threads on
    gfx942 fail in the driver's launch, a RuntimeError its autotuner lets through. 3.9 raises
    OutOfResources as it loads the kernel, which its autotuner skips."""
    triton_release("3.2.0")
    write_manifest(tmp_path, HAND_WRITTEN_LAUNCH, kernels_py=AUTOTUNED)
    run = run_tool(["check", "--python", venv_python, "--triton", "3.2.0,current", "--json", "r.json"],
                   cwd=tmp_path, timeout=900)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    old, new = (cell(report, "double[w32]", "hip:gfx942", v) for v in ("3.2.0", "3.9.0"))
    assert (old["status"], old["new"], old["autotuner"]) == ("launch", True, {"skips": False, "raises": "RuntimeError"})
    assert (new["status"], new["new"], new["autotuner"]) == ("skipped", False,
                                                             {"skips": True, "raises": "OutOfResources"})
    diff = run_tool(["diff", "r.json", "--versions", "3.2.0", "3.9.0"], cwd=tmp_path)
    assert "double[w32] on hip:gfx942: launch-limit" in diff.stdout and "-> skipped" in diff.stdout, diff.stdout
