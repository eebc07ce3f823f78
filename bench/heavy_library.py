#!/usr/bin/env python3
"""A "heavy library" for the speed benchmark (issue 32): a generated package whose import takes
seconds and starts threads, as real Triton libraries do (they import torch and transformers).

    bench/heavy_library.py OUT [--modules 25] [--rows 40] [--targets cuda:90,hip:gfx942]
                               [--import-seconds 3] [--driver-free]

writes
  OUT/deps/heavydep/    a third-party package (put OUT/deps on PYTHONPATH): imports torch, and
                        transformers' Llama model where they are installed, then spends CPU until
                        --import-seconds have passed since it started, and starts threads that
                        stay (a monitor thread holding a lock most of the time, a thread pool);
  OUT/lib/heavylib/     the user's package: `heavylib/__init__.py` imports heavydep, `_vendor.py`
                        asks Triton's active driver for its backend at import (as flag_gems picks
                        its vendor tables; --driver-free leaves that out), and ops/kNN.py are
                        --modules kernel modules of six LLM-style kernels each (RMSNorm,
                        softmax, SwiGLU, cross-entropy, a tiled matmul, flash attention);
  OUT/lib/heavy.toml    --rows rows per module over dtypes, block sizes, warps and stages: a fifth
                        each RMSNorm, cross-entropy and matmul, two fifths attention.

Every kernel has a name of its own, so no two cells share Triton's cache entry.
"""
import argparse
import json
import pathlib

HEAVYDEP = '''"""A stand-in for a library's third-party imports (torch, transformers): slow, and leaves
threads running."""
import concurrent.futures
import threading
import time

_started = time.monotonic()
try:
    import torch  # noqa: F401
except ImportError:
    torch = None
try:
    from transformers.models.llama import modeling_llama  # noqa: F401
except ImportError:
    modeling_llama = None

IMPORT_SECONDS = {import_seconds}
_x = 0
while time.monotonic() - _started < IMPORT_SECONDS:  # CPU, as an import is
    _x = (_x * 7 + 1) % 1000003

LOCK = threading.Lock()


def _monitor():  # like tqdm's monitor: wakes up, holds a lock a moment, sleeps
    while True:
        with LOCK:
            time.sleep(0.01)
        time.sleep(0.05)


threading.Thread(target=_monitor, name="heavydep-monitor", daemon=True).start()
POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)
POOL.submit(time.sleep, 0.01).result()
'''

INIT = '''"""The user's package: its import brings the third-party ones."""
import heavydep  # noqa: F401

from heavylib import _vendor  # noqa: F401
'''

VENDOR_ASKS = '''"""Picks per-vendor settings at import from Triton's active driver, as flag_gems does."""
try:
    from triton.runtime import driver
    BACKEND = driver.active.get_current_target().backend
except Exception:  # no driver: the module is being inspected
    BACKEND = "unknown"
IS_HIP = BACKEND == "hip"
'''

VENDOR_FREE = '''"""Per-vendor settings without asking Triton's driver."""
BACKEND = "unknown"
IS_HIP = False
'''

KERNELS = '''"""Kernel module {index} of heavylib."""
import triton
import triton.language as tl

from heavylib._vendor import IS_HIP  # noqa: F401


@triton.jit
def rms_norm_{index}(X, W, Y, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def softmax_{index}(X, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(Y + row * stride + cols, (e / tl.sum(e, axis=0)).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_{index}(A, B, C, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(C + offs, (a * tl.sigmoid(a) * b).to(C.dtype.element_ty), mask=mask)


@triton.jit
def cross_entropy_{index}(LOGITS, LABELS, LOSS, stride, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    label = tl.load(LABELS + row)
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(LOGITS + row * stride + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(LOGITS + row * stride + label).to(tl.float32)
    tl.store(LOSS + row, tl.log(s) + m - target)


@triton.jit
def attention_{index}(Q, K, V, O, sqz, sqm, skz, skn, svz, svn, soz, som, N_CTX, sm_scale,
                      BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    z = tl.program_id(1)
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(Q + z * sqz + rm[:, None] * sqm + rd[None, :], mask=rm[:, None] < N_CTX, other=0.0)
    m_i = tl.full((BM, ), -float("inf"), tl.float32)
    l_i = tl.zeros((BM, ), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    hi = (start_m + 1) * BM if CAUSAL else N_CTX
    for start_n in range(0, hi, BN):
        rn = start_n + tl.arange(0, BN)
        k = tl.load(K + z * skz + rn[None, :] * skn + rd[:, None], mask=rn[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        if CAUSAL:
            qk = tl.where(rm[:, None] >= rn[None, :], qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + z * svz + rn[:, None] * svn + rd[None, :], mask=rn[:, None] < N_CTX, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(O + z * soz + rm[:, None] * som + rd[None, :], acc.to(O.dtype.element_ty),
             mask=rm[:, None] < N_CTX)


@triton.jit
def matmul_{index}(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(B + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
'''

DTYPES = ["fp32", "fp16", "bf16"]


def _rows_for(index, rows):
    """`rows` (kernel, signature, constants, options) over five kinds, round robin: the light
    row-wise kernels, a tiled matmul and a flash-attention forward (causal and not), whose
    compiles take seconds as a training library's do."""
    out = []
    for r in range(rows):
        kind, step = r % 5, r // 5
        dtype = DTYPES[step % 3]
        half = DTYPES[1 + step % 2]
        warps = (4, 8)[step % 2]
        if kind == 0:
            sig = {"X": f"*{dtype}:16", "W": f"*{dtype}:16", "Y": f"*{dtype}:16", "stride": "i32:16",
                   "N": "i32", "eps": "fp32"}
            out.append((f"rms_norm_{index}", sig, {"BLOCK": 256 << (step % 4)}, {"num_warps": warps}))
        elif kind == 1:
            sig = {"LOGITS": f"*{dtype}:16", "LABELS": "*i64:16", "LOSS": "*fp32:16", "stride": "i32:16",
                   "V": "i32"}
            out.append((f"cross_entropy_{index}", sig, {"BLOCK": 1024 << (step % 3)}, {"num_warps": warps}))
        elif kind == 2:
            sig = {"A": f"*{half}:16", "B": f"*{half}:16", "C": f"*{half}:16", "M": "i32", "N": "i32",
                   "K": "i32", "sam": "i32:16", "sak": "i32", "sbk": "i32:16", "sbn": "i32", "scm": "i32:16",
                   "scn": "i32"}
            tile = [(64, 64, 32), (128, 64, 32), (64, 128, 64), (128, 128, 32)][step % 4]
            out.append((f"matmul_{index}", sig, dict(zip(("BM", "BN", "BK"), tile)),
                        {"num_warps": warps, "num_stages": 3}))
        else:
            sig = {name: f"*{half}:16" for name in ("Q", "K", "V", "O")}
            sig.update({name: "i32:16" for name in ("sqz", "sqm", "skz", "skn", "svz", "svn", "soz", "som")})
            sig.update({"N_CTX": "i32", "sm_scale": "fp32"})
            bm, bn, d = [(128, 64, 64), (64, 64, 128), (128, 32, 64), (64, 32, 128)][step % 4]
            constants = {"BM": bm, "BN": bn, "D": d, "CAUSAL": kind == 3}
            out.append((f"attention_{index}", sig, constants, {"num_warps": 4, "num_stages": 2 + step % 2}))
    return out


def _toml_table(values):
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in values.items()) + " }"


def generate(out, modules=25, rows=40, targets=("cuda:90", "hip:gfx942"), import_seconds=3.0,
             driver_free=False):
    """Writes the packages and manifest under `out`; returns (manifest path, PYTHONPATH folder)."""
    out = pathlib.Path(out)
    dep = out / "deps" / "heavydep"
    dep.mkdir(parents=True, exist_ok=True)
    (dep / "__init__.py").write_text(HEAVYDEP.format(import_seconds=float(import_seconds)))
    lib = out / "lib" / "heavylib"
    (lib / "ops").mkdir(parents=True, exist_ok=True)
    (lib / "__init__.py").write_text(INIT)
    (lib / "_vendor.py").write_text(VENDOR_FREE if driver_free else VENDOR_ASKS)
    (lib / "ops" / "__init__.py").write_text("")
    lines = ["[defaults]", f"targets = {json.dumps(list(targets))}", "timeout = 300", ""]
    for index in range(modules):
        name = f"k{index:02d}"
        (lib / "ops" / f"{name}.py").write_text(KERNELS.format(index=index))
        for r, (kernel, sig, constants, options) in enumerate(_rows_for(index, rows)):
            lines += ["[[kernel]]", f'name = "{name}-{r:02d}-{kernel}"',
                      f'target = "heavylib.ops.{name}:{kernel}"', f"signature = {_toml_table(sig)}",
                      f"constants = {_toml_table(constants)}", f"options = {_toml_table(options)}", ""]
    manifest = out / "lib" / "heavy.toml"
    manifest.write_text("\n".join(lines))
    return manifest, out / "deps"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--modules", type=int, default=25)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--targets", default="cuda:90,hip:gfx942")
    parser.add_argument("--import-seconds", type=float, default=3.0)
    parser.add_argument("--driver-free", action="store_true")
    args = parser.parse_args()
    manifest, deps = generate(args.out, args.modules, args.rows, args.targets.split(","), args.import_seconds,
                              args.driver_free)
    print(f"{manifest}\nPYTHONPATH={deps}")


if __name__ == "__main__":
    main()
