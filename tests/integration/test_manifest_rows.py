"""Which blocks of a manifest are rows: the README's own example, checked on a real kernel."""
import json
import re

import pytest

from conftest import REPO, run_tool, write_manifest

# A real kernel with the README example's arguments: softmax(q q^T) q over blocks of rows, q
# serving as query, key and value.
ATTENTION_PY = '''\
import triton
import triton.language as tl


@triton.jit
def attention(q_ptr, out_ptr, seq_len, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < seq_len,
                other=0.0)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK], tl.float32)
    acc = tl.zeros([BLOCK, HEAD_DIM], tl.float32)
    for start in range(0, seq_len, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        k = tl.load(q_ptr + cols[:, None] * HEAD_DIM + dims[None, :], mask=cols[:, None] < seq_len,
                    other=0.0)
        s = tl.where(cols[None, :] < seq_len, tl.dot(q, tl.trans(k)), float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        total = total * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(k.dtype), k)
        m = m_new
    out = acc / total[:, None]
    tl.store(out_ptr + rows[:, None] * HEAD_DIM + dims[None, :], out.to(out_ptr.dtype.element_ty),
             mask=rows[:, None] < seq_len)
'''


def example_manifest(doc):
    """The ```toml block of `doc` that holds the attention example, pointed at ATTENTION_PY."""
    blocks = re.findall(r"```toml\n(.*?)```", (REPO / doc).read_text(), re.S)
    example = next(b for b in blocks if 'name      = "attention-fp16"' in b)
    assert 'target    = "mypkg.kernels:attention"' in example
    return example.replace('target    = "mypkg.kernels:attention"', 'target    = "kernels.py:attention"')


@pytest.mark.slow
@pytest.mark.parametrize("doc", ["README.md", "docs/manifest.md"])
def test_the_documented_example_checks_the_kernel_and_its_variant(venv_python, tmp_path, doc):
    manifest = write_manifest(tmp_path, example_manifest(doc), kernels_py=ATTENTION_PY)
    (tmp_path / "src").mkdir()  # docs/manifest.md's example puts it on sys.path
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "-j", "2"],
                   cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(json_path.read_text())
    assert report["rows"] == ["attention-fp16", "attention-fp16[bf16]"]
    assert report["targets"] == ["cuda:80", "cuda:90", "hip:gfx942"]
    assert len(report["cells"]) == 6
    assert {c["status"] for c in report["cells"]} == {"ok"}, run.stdout
    assert "warning" not in run.stderr, run.stderr


KERNEL_LEFT_INCOMPLETE = '''\
[defaults]
targets = ["cuda:80", "cuda:90"]

[[kernel]]
name      = "attention-fp16"
target    = "kernels.py:attention"
signature = { q_ptr = "*fp16:16", out_ptr = "*fp16:16" }
constants = { BLOCK = 64, HEAD_DIM = 128 }
  [[kernel.variant]]
  name      = "bf16"
  signature = { q_ptr = "*bf16:16", out_ptr = "*bf16:16", seq_len = "i32" }
'''


@pytest.mark.slow
def test_a_kernel_value_no_row_compiles_is_named_once(venv_python, tmp_path):
    manifest = write_manifest(tmp_path, KERNEL_LEFT_INCOMPLETE, kernels_py=ATTENTION_PY)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path],
                   cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(json_path.read_text())["rows"] == ["attention-fp16[bf16]"]
    warnings = [line for line in run.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"triton-portcheck: warning: {manifest}:7: kernel 'attention-fp16'.signature.out_ptr: \"*fp16:16\" is "
        "compiled in no row: every variant replaces it, and the [[kernel]] is not a row of its own because it "
        "leaves seq_len to its variants (give seq_len there to check it as a row too)"], run.stderr


def test_the_demo_kernel_that_leaves_its_signature_to_its_variants_is_no_row(venv_python, tmp_path):
    run = run_tool(["check", "--demo", "--static-only", "--python", venv_python, "--json", tmp_path / "d.json"],
                   cwd=tmp_path)
    report = json.loads((tmp_path / "d.json").read_text())
    assert [r for r in report["rows"] if r.startswith("dot_small")] == ["dot_small[fp16]", "dot_small[int8]"]
    assert len(report["cells"]) == 81
    assert "warning" not in run.stderr, run.stderr
