"""Static pre-checks (before compiling) and launch-limit checks (after compiling)."""
import json

import pytest

from conftest import REPO, run_tool, write_manifest

pytestmark = pytest.mark.slow


def by_cell(report):
    return {(c["row"], c["target"]): c for c in report["cells"]}


def test_demo_predictions_match_what_triton_does(demo_run):
    cells = by_cell(demo_run.report)
    predicted = {k for k, c in cells.items() if c["predicted"]}
    assert predicted == {("gamma_ratio", t) for t in ("hip:gfx942", "hip:gfx950", "hip:gfx1100", "hip:gfx1250")} | \
        {("quantize_fp8", "cuda:75"), ("quantize_fp8", "cuda:80")}
    for key in predicted:
        assert cells[key]["status"] == "failed" and cells[key]["kind"] == "frontend-error", key
    assert "tgamma" in cells[("gamma_ratio", "hip:gfx942")]["predicted"]["reason"]
    assert "fp8e4nv" in cells[("quantize_fp8", "cuda:80")]["predicted"]["reason"]
    # The guarded kernel's hip branch avoids tgamma: no alarm on any target.
    assert not any(c["predicted"] for (row, _), c in cells.items() if row == "gamma_ratio_guarded")
    assert "static pre-checks predicted 6 failing cells before compiling; 6 of the 6 compiled did fail" in \
        demo_run.stdout
    assert "front:A!" in demo_run.stdout


def test_static_only_is_fast_and_compiles_nothing(venv_python, tmp_path):
    json_path = tmp_path / "static.json"
    run = run_tool(["check", "--demo", "--static-only", "--python", venv_python, "--json", json_path], cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # predicted failures are new failures
    report = json.loads(json_path.read_text())
    statuses = {c["status"] for c in report["cells"]}
    assert statuses == {"unchecked", "failed"}
    assert sum(c["kind"] == "predicted" for c in report["cells"]) == 6
    assert all(c["compile_s"] == 0 for c in report["cells"])
    assert report["environment"]["static"]["mode"] == "only"
    # The pre-checks themselves, measured inside the worker once Triton is imported: well under 1 s.
    assert report["environment"]["static"]["seconds"] < 1.0
    assert report["wall_s"] < 5.0  # the whole run, interpreter start and Triton import included
    assert "pred:A!" in run.stdout and "81 not compiled" not in run.stdout


KERNEL = "\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n"
ROW = ('[defaults]\ntargets = ["cuda:90", "hip:gfx942"]\n[[kernel]]\nname = "k"\ntarget = "kernels.py:k"\n'
       'signature = { x_ptr = "*fp32:16" }\nconstants = { BLOCK = 64 }\n')


@pytest.mark.parametrize("fault", ["import not_a_module_xyz", "import ctypes; ctypes.string_at(0)"])
def test_static_only_fails_a_module_that_cannot_be_imported_as_a_full_check_does(fault, venv_python, tmp_path):
    # Issue 28: --static-only (the pre-commit hook's default) showed such a module as not compiled,
    # "0 failed", exit 0, while a full check reported import-error.
    kernels = "import triton\nimport triton.language as tl\n" + fault + "\n" + KERNEL
    manifest = write_manifest(tmp_path, ROW, kernels_py=kernels)
    verdicts = {}
    for mode in ("only", "compile"):
        out = tmp_path / f"{mode}.json"
        flags = ["--static-only"] if mode == "only" else ["--static", mode]
        run = run_tool(["check", "-m", manifest, "--python", venv_python, *flags, "--no-cache", "--json", out],
                       cwd=tmp_path)
        assert run.returncode == 1, run.stdout + run.stderr
        verdicts[mode] = {(c["row"], c["target"]): (c["status"], c["kind"], c["fingerprint"])
                          for c in json.loads(out.read_text())["cells"]}
    assert verdicts["only"] == verdicts["compile"]
    assert {kind for _, kind, _ in verdicts["only"].values()} == {"import-error"}


def test_static_skip_compiles_only_the_rest(venv_python, tmp_path):
    json_path = tmp_path / "skip.json"
    run = run_tool(["check", "--demo", "--static", "skip", "--no-cache", "--python", venv_python, "-t",
                    "cuda:80,hip:gfx942", "--json", json_path], cwd=tmp_path)
    assert run.returncode == 1
    cells = by_cell(json.loads(json_path.read_text()))
    assert cells[("gamma_ratio", "hip:gfx942")]["kind"] == "predicted"
    assert cells[("gamma_ratio", "hip:gfx942")]["compile_s"] == 0
    assert cells[("quantize_fp8", "cuda:80")]["kind"] == "predicted"
    assert cells[("axpy", "cuda:80")]["status"] == "ok" and cells[("axpy", "cuda:80")]["compile_s"] > 0


MATMUL_ROW = '''
[[kernel]]
name = "mm_128x256x64_s4"
target = "{kernel}:matmul"
signature = {{ a_ptr = "*fp16:16", b_ptr = "*fp16:16", c_ptr = "*fp16:16", M = "i32:16", N = "i32:16", K = "i32:16", stride_am = "i32:16", stride_bk = "i32:16", stride_cm = "i32:16" }}
constants = {{ stride_ak = 1, stride_bn = 1, stride_cn = 1, BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 64 }}
options = {{ num_warps = 8, num_stages = 4 }}
'''


def test_launch_limits_from_real_binaries_fit_cuda90_not_cuda86_or_cuda120(venv_python, tmp_path):
    """A 128x256x64 fp16 tile with num_stages 4, specialised as a PyTorch launch would: Triton 3.9.0
    allocates 196608 bytes of shared memory for cuda:90 (four buffers for TMA/wgmma pipelining), which
    fits its 232448, and 147456 for cuda:86 and cuda:120 (three buffers), which does not fit their
    101376 (data/launch-limits.toml). The same sizes as measured on an H200 (TRITON-NOTES.md)."""
    manifest = write_manifest(tmp_path, '[defaults]\ntargets = ["cuda:86", "cuda:90", "cuda:120"]\n' +
                              MATMUL_ROW.format(kernel=REPO / "bench" / "h200" / "matmul.py"), kernels_py=None)
    json_path = tmp_path / "launch.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path], cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    cells = by_cell(json.loads(json_path.read_text()))
    fits = cells[("mm_128x256x64_s4", "cuda:90")]
    assert fits["status"] == "ok"
    assert fits["metadata"]["shared"] == 196608
    assert fits["launch"]["needs"]["shared_bytes"] == 196608 and not fits["launch"]["problems"]
    assert fits["launch"]["limits"]["max_shared_bytes_per_block"] == 232448
    for target in ("cuda:86", "cuda:120"):
        cell = cells[("mm_128x256x64_s4", target)]
        assert cell["status"] == "launch" and cell["kind"] == "launch-limit" and cell["new"], cell
        assert cell["message"] == f"needs 147456 bytes of shared memory; {target} allows 101376"
    assert "launch:A" in run.stdout

    warn = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--launch-limits", "warn"],
                    cwd=tmp_path)
    assert warn.returncode == 0, warn.stdout
    assert "launch-limit warning: mm_128x256x64_s4 on cuda:86: needs 147456 bytes" in warn.stdout


def test_targets_shows_the_tables_with_their_sources(venv_python, tmp_path):
    run = run_tool(["targets", "--python", venv_python], cwd=tmp_path)
    assert run.returncode == 0
    assert "libdevice functions: cuda 197, hip 59" in run.stdout
    # The second table (after the assemblers): fp8 dtypes and launch limits per target.
    line = [l for l in run.stdout.splitlines() if l.startswith("cuda:90 ")][-1]
    assert "fp8e4nv" in line and "232448" in line
    line = [l for l in run.stdout.splitlines() if l.startswith("cuda:80 ")][-1]
    assert "fp8e4nv" not in line and "166912" in line
    limits = (REPO / "data" / "launch-limits.toml").read_text()
    assert "docs.nvidia.com/cuda/cuda-c-programming-guide" in limits and "rocm.docs.amd.com" in limits
