"""torch.compile's kernels: Inductor compiles them through CachingAutotuner._precompile_config ->
triton.compile, never JITFunction.run. `capture` records each config it compiles, saves the
module beside the manifest, and `check` compiles the rows for other targets (docs/capture.md).
Real Inductor code on modules it generated (tests/fixtures/inductor); the live run of
torch.compile itself is bench/h200/inductor_live.sh."""
import json
import shutil
import tomllib

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


KERNELS = {"triton_poi_fused_add_mul_relu_sigmoid_0", "triton_per_fused_sum_0",
           "triton_per_fused__softmax_prepare_softmax_online_0", "triton_per_fused_native_layer_norm_0",
           "triton_tem_fused_mm_0", "triton_mm"}


def test_without_a_gpu_torch_compile_generates_each_vendors_kernels(tmp_path, venv_python):
    """--fake-gpu: torch believes in one device of each persona and every tensor is fake, so
    Inductor writes the kernels it would for that device; nothing compiles or launches."""
    shutil.copy(FIXTURES / "compile_model.py", tmp_path)
    run = run_tool(["capture", "--mode", "record", "--fake-gpu", "--as", "cuda:90,hip:gfx942", "--",
                    venv_python, "compile_model.py"], cwd=tmp_path, timeout=600,
                   TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor-cache"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("matmul: (1024, 1024) on cuda:0") == 2, run.stdout
    data = tomllib.loads((tmp_path / "portcheck.toml").read_text())
    by_vendor = {}
    for kernel in data["kernel"]:
        for persona in kernel["captured_as"]:
            by_vendor.setdefault(persona, set()).add(kernel["target"].rsplit(":", 1)[1])
    # The same six kernels as torch.compile wrote live on the H200 (docs/capture.md), for each.
    assert by_vendor == {"cuda:90": KERNELS, "hip:gfx942": KERNELS}
    # max-autotune's candidates differ by vendor: AMD's fit its 64 KiB of LDS.
    rows = rows_of(tmp_path / "portcheck.toml")
    amd_mm = [r for r in rows.values() if r["target"].endswith(":triton_mm") and r["captured_as"] == ["hip:gfx942"]]
    nvidia_mm = [r for r in rows.values() if r["target"].endswith(":triton_mm") and r["captured_as"] == ["cuda:90"]]
    assert len(amd_mm) > 0 and len(nvidia_mm) > 0

    report = tmp_path / "report.json"
    run = run_tool(["check", "--python", venv_python, "-t", "cuda:90,hip:gfx942", "--json", report, "--no-cache"],
                   cwd=tmp_path, timeout=900)
    assert run.returncode == 1, run.stdout + run.stderr
    cells = json.loads(report.read_text())["cells"]
    # Each vendor's kernels only on its own targets: AMD's were generated for AMD.
    assert len(cells) == len(rows)
    for cell in cells:
        assert rows[cell["row"]]["captured_as"] == [cell["target"]], cell["row"]
    # The one failure is the candidate Inductor itself drops on an H200: "OutOfMemoryError: out of
    # resource: triton_mm Required: 262144 Hardware limit:232448".
    failed = [(c["target"], c["kind"], c["message"]) for c in cells if c["status"] != "ok"]
    assert failed == [("cuda:90", "launch-limit",
                       "needs 262144 bytes of shared memory; cuda:90 allows 232448")], failed


def test_scripts_that_put_a_model_on_the_gpu_record_under_fake_gpu(tmp_path, venv_python):
    """The two usual ways of putting a model on the GPU, with plain `nn` modules and a Hugging
    Face decoder, once ended in "CUDA driver version is insufficient" with nothing recorded:
    `model.to("cuda")` / `.cuda()` of a model built on the CPU, and `with torch.device("cuda")`
    around its construction (its random initialisation)."""
    shutil.copy(FIXTURES / "place_model.py", tmp_path)
    run = run_tool(["capture", "--mode", "record", "--fake-gpu", "--as", "cuda:90,hip:gfx942", "--",
                    venv_python, "place_model.py"], cwd=tmp_path, timeout=600,
                   TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor-cache"))
    assert run.returncode == 0, run.stderr
    for line in ("nn moved: (8, 64) on cuda:0 (True)", "nn built on the device: (8, 96) on cuda:0 (True)",
                 "llama moved: (1, 16, 512) on cuda:0 (True)",
                 "llama built on the device: (1, 16, 512) on cuda:0 (True)"):
        assert run.stdout.count(line) == 2, run.stdout  # once per persona
    data = tomllib.loads((tmp_path / "portcheck.toml").read_text())
    names = {}
    for kernel in data["kernel"]:
        for persona in kernel["captured_as"]:
            names.setdefault(persona, set()).add(kernel["target"].rsplit(":", 1)[1])
    for persona in ("cuda:90", "hip:gfx942"):
        fused = " ".join(sorted(names[persona]))
        # the nn stacks' fused epilogues, and the decoder's RMSNorm and SiLU MLP
        for part in ("addmm_relu", "addmm_gelu_native_layer_norm", "mean_mul_pow_rsqrt", "mul_silu"):
            assert part in fused, (persona, fused)
    assert run.stderr.count("parameters are made without requires_grad") == 1, run.stderr  # said once


def test_fake_gpu_needs_record_mode(tmp_path):
    run = run_tool(["capture", "--fake-gpu", "--", "touch", "ran"], cwd=tmp_path)
    assert run.returncode == 2 and "--fake-gpu needs --mode record" in run.stderr, run.stderr
    assert not (tmp_path / "ran").exists()
