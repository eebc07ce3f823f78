"""check --reduce on real compiles: rows that differ only in divisibility are compiled once per
target and the others carry that verdict; element types and options still split groups."""
import json

import pytest

from conftest import KERNELS_PY, run_tool, write_manifest

pytestmark = pytest.mark.slow

ROWS = """[defaults]
targets = ["cuda:80", "hip:gfx942"]

[[kernel]]
name = "axpy"
target = "kernels.py:axpy"
signature = {{ x_ptr = "*fp32{d}", y_ptr = "*fp32{d}", out_ptr = "*fp32{d}", n = "i32{d}", a = "fp32" }}
constants = {{ BLOCK = 1024 }}

  [[kernel.variant]]
  name = "plain"
  signature = {{ x_ptr = "*fp32", y_ptr = "*fp32", out_ptr = "*fp32", n = "i32" }}

  [[kernel.variant]]
  name = "w8"
  options = {{ num_warps = 8 }}
"""


def test_reduce_compiles_each_group_once_and_reports_every_row(venv_python, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS_PY)
    manifest = write_manifest(tmp_path, ROWS.format(d=":16"))
    reports = {}
    for mode in ("exhaustive", "reduce"):
        out = tmp_path / f"{mode}.json"
        run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--no-cache", "--json", out]
                       + (["--reduce"] if mode == "reduce" else []), cwd=tmp_path, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        reports[mode] = json.loads(out.read_text())
    cells = {(c["row"], c["target"]): c for c in reports["reduce"]["cells"]}
    assert len(cells) == 6
    represented = {k: c["represented_by"] for k, c in cells.items() if c["represented_by"]}
    assert represented == {("axpy[plain]", "cuda:80"): "axpy", ("axpy[plain]", "hip:gfx942"): "axpy"}
    for key in represented:
        assert cells[key]["compile_s"] == 0
        assert cells[key]["status"] == "ok"
    full = {(c["row"], c["target"]): c["status"] for c in reports["exhaustive"]["cells"]}
    assert {k: c["status"] for k, c in cells.items()} == full
    assert "2 not compiled (--reduce" in run.stdout
