"""torch.compile's kernels: Inductor compiles them through CachingAutotuner._precompile_config ->
triton.compile, never JITFunction.run. `capture` records each config it compiles, saves the
module beside the manifest, and `check` compiles the rows for other targets (docs/capture.md).
Real Inductor code on modules it generated (tests/fixtures/inductor); the live run of
torch.compile itself is bench/h200/inductor_live.sh."""
import json
import shutil

from conftest import REPO, run_tool
from test_capture import rows_of

FIXTURES = REPO / "tests" / "fixtures" / "inductor"
MODULES = ["pointwise_cuda.py", "layer_norm_cuda.py", "softmax_hip.py"]


def test_inductor_compiles_become_rows_that_check_compiles_everywhere(tmp_path, venv_python):
    for name in MODULES + ["compile_saved.py"]:
        shutil.copy(FIXTURES / name, tmp_path / name)
    run = run_tool(["capture", "--mode", "record", "--", venv_python, "compile_saved.py", *MODULES],
                   cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "4 distinct launch(es) of 3 kernel(s) -> 4 row(s)" in run.stderr
    inductor_hashes = json.loads(run.stdout.strip().splitlines()[-1])
    rows = rows_of(tmp_path / "portcheck.toml")
    assert set(rows) == {"triton_poi_fused_add_mul_relu_0[XBLOCK=128]",
                         "triton_poi_fused_add_mul_relu_0[XBLOCK=256]",
                         "triton_per_fused_native_layer_norm_0",
                         "triton_per_fused__softmax_prepare_softmax_online_0"}
    pointwise = rows["triton_poi_fused_add_mul_relu_0[XBLOCK=256]"]
    # What Inductor passed: its signature, divisibility, the config's block size and options.
    assert pointwise["signature"] == {"in_ptr0": "*fp32:16", "out_ptr0": "*fp32:16", "xnumel": "i32:16"}
    assert pointwise["constants"] == {"XBLOCK": 256}
    assert pointwise["options"]["num_warps"] == 4 and pointwise["options"]["debug"] is True
    assert "launch_pdl" not in pointwise["options"]  # NVIDIA's alone: rows carry what all targets take
    # The device each module was generated for is its persona.
    assert pointwise["captured_as"] == ["cuda:90"]
    assert rows["triton_per_fused__softmax_prepare_softmax_online_0"]["captured_as"] == ["hip:gfx942"]
    # Saved beside the manifest, importable without a GPU: Inductor's driver set-up is disabled.
    saved = (tmp_path / pointwise["target"].split(":")[0]).read_text()
    assert "triton_helpers.set_driver_to_gpu()\n" not in saved
    assert saved.count("\n") == (FIXTURES / "pointwise_cuda.py").read_text().count("\n")

    report = tmp_path / "report.json"
    run = run_tool(["check", "--python", venv_python, "-t", "cuda:90,cuda:80,hip:gfx942", "--json", report,
                    "--no-cache"], cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    cells = json.loads(report.read_text())["cells"]
    assert len(cells) == 12 and {c["status"] for c in cells} == {"ok"}
    # Each config compiled with the warps Inductor chose.
    warps = {(c["row"], c["target"]): c["metadata"]["num_warps"] for c in cells}
    assert warps[("triton_per_fused_native_layer_norm_0", "hip:gfx942")] == 8
    assert len(inductor_hashes["triton_poi_fused_add_mul_relu_0"]) == 2
