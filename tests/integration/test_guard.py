"""gamma_ratio_guarded: `if is_hip():` must trace the hip branch on hip targets.

is_hip() asks the *active driver* for its target; with no GPU there is none, so the worker installs
a stand-in driver reporting the cell's target. The tool does not keep the IR, so the IR checks
compile through a helper that reuses the worker's own pieces (helpers/ir_probe.py).
"""
import json
import os
import subprocess

import pytest

from conftest import DEMO_DIR, HELPERS, WORKER_DIR, cells_by_position

HIP = [("gfx942", 64), ("gfx950", 64), ("gfx1100", 32), ("gfx1250", 32)]
GUARDED_REQUEST = {
    "kind": "compile",
    "zygote": None,
    "kernel": {"file": str(DEMO_DIR / "kernels.py"), "function": "gamma_ratio_guarded",
               "import_root": str(DEMO_DIR)},
    "row_name": "gamma_ratio_guarded",
    "signature": {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16"},
    "constants": {"BLOCK": 1024},
    "options": {"num_warps": 4},
}


def request_for(backend, arch, warp_size):
    return dict(GUARDED_REQUEST, target={"backend": backend, "arch": arch, "warp_size": warp_size})


def worker_env(tmp_path):
    env = dict(os.environ)
    env.pop("TRITON_PORTCHECK_INJECT", None)
    env["PYTHONPATH"] = str(WORKER_DIR)
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton-cache")  # fresh: never a kernel from another run
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def probe_ir(venv_python, tmp_path, request, *flags):
    req = tmp_path / "request.json"
    req.write_text(json.dumps(request))
    proc = subprocess.run([str(venv_python), str(HELPERS / "ir_probe.py"), str(req), *flags], cwd=tmp_path,
                          env=worker_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_guarded_kernel_compiles_on_every_target(demo_run):
    cells = cells_by_position(demo_run.report)
    for target in demo_run.report["targets"]:
        cell = cells[("gamma_ratio_guarded", target)]
        assert cell["status"] == "ok", (target, cell["message"])
        assert cell["metadata"]["target"]["backend"] == target.split(":")[0]


def test_worker_cell_command_compiles_the_guarded_kernel_for_hip(venv_python, tmp_path):
    """The worker run by hand with a request shaped like check.cpp's one."""
    req, res, progress = tmp_path / "req.json", tmp_path / "res.json", tmp_path / "progress"
    req.write_text(json.dumps(request_for("hip", "gfx942", 64)))
    proc = subprocess.run([str(venv_python), "-m", "portcheck_worker", "cell", str(req), str(res), str(progress)],
                          cwd=DEMO_DIR, env=worker_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(res.read_text())
    assert result["status"] == "ok", result.get("error")
    assert result["metadata"]["target"] == {"backend": "hip", "arch": "gfx942", "warp_size": 64}
    assert result["sizes"]["hsaco"] > 0
    # The stage marks; the cell's child also marks its fork and end ("cell-parent ..." lines).
    lines = progress.read_text().splitlines()
    assert [line.split()[1] for line in lines if line.startswith("stage ")] == ["import", "frontend", "ttir", "ttgir", "llir", "amdgcn", "hsaco",
                                                  "inspect"]


@pytest.mark.parametrize("arch,warp_size", HIP, ids=[a for a, _ in HIP])
def test_hip_cells_trace_the_hip_branch(venv_python, tmp_path, arch, warp_size):
    out = probe_ir(venv_python, tmp_path, request_for("hip", arch, warp_size))
    assert out["ok"], out.get("error")
    assert out["target"]["arch"] == arch
    for stage, symbols in out["symbols"].items():
        assert not [s for s in symbols if "tgamma" in s], f"{stage} on {arch} calls tgamma: {symbols}"
    assert "__ocml_lgamma_f32" in out["symbols"]["ttir"], out["symbols"]
    assert "__ocml_lgamma_f32" in out["symbols"]["llir"], out["symbols"]


def test_cuda_cells_trace_the_cuda_branch(venv_python, tmp_path):
    out = probe_ir(venv_python, tmp_path, request_for("cuda", "80", 32))
    assert out["ok"], out.get("error")
    for stage, symbols in out["symbols"].items():
        assert "__nv_tgammaf" in symbols, f"{stage}: {symbols}"
        assert not [s for s in symbols if "lgamma" in s], f"{stage}: {symbols}"


def test_without_the_stand_in_driver_the_hip_compile_fails(venv_python, tmp_path):
    """No active driver: is_hip() is False, the tgamma branch is traced and hip has no tgamma."""
    out = probe_ir(venv_python, tmp_path, request_for("hip", "gfx942", 64), "--no-driver")
    assert not out["ok"], f"compiled without the stand-in driver: {out}"
    assert "has no attribute 'tgamma'" in out["error"], out["error"]
