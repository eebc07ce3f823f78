"""Calls flash-linear-attention's (fla-core on PyPI) autotuned operators forward and backward on
the GPU, each once, as a library's own tests would: the workload `capture --mode live` records
and whose real autotuning (TRITON_PRINT_AUTOTUNING=1) is the reference for issue 49
(bench/h200/autotune_fla.sh). Each call is one try: one that fails is reported, the rest go on.
No operator is started after FLA_OPS_SECONDS (default: no limit): each autotunes every config of
its kernels, and a device session is short."""
import os
import sys
import time

import torch

import fla
from fla.modules import GroupNorm, LayerNorm, RMSNorm
from fla.ops import (chunk_delta_rule, chunk_gated_delta_rule, chunk_gla, chunk_linear_attn, chunk_retention,
                     chunk_simple_gla, fused_recurrent_gla)

print("fla", getattr(fla, "__version__", "?"), "torch", torch.__version__, flush=True)
torch.manual_seed(0)
B, T, H, D = 2, 256, 4, 64


def qkv(dtype=torch.bfloat16):
    return [torch.randn(B, T, H, D, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3)]


def gate():
    return torch.nn.functional.logsigmoid(torch.randn(B, T, H, D, device="cuda")).requires_grad_()


def backward(out):
    (out[0] if isinstance(out, tuple) else out).float().sum().backward()


def beta():
    return torch.rand(B, T, H, device="cuda", dtype=torch.bfloat16).requires_grad_()


calls = {
    "chunk_gla": lambda: backward(chunk_gla(*qkv(), gate())),
    "fused_recurrent_gla": lambda: backward(fused_recurrent_gla(*qkv(), gate())),
    "chunk_simple_gla": lambda: backward(chunk_simple_gla(*qkv(), g=gate()[..., 0].contiguous())),
    "chunk_retention": lambda: backward(chunk_retention(*qkv())),
    "chunk_linear_attn": lambda: backward(chunk_linear_attn(*qkv())),
    "chunk_delta_rule": lambda: backward(chunk_delta_rule(*[torch.nn.functional.normalize(t, dim=-1).detach()
                                                            .requires_grad_() for t in qkv()], beta())),
    "chunk_gated_delta_rule": lambda: backward(chunk_gated_delta_rule(
        *[torch.nn.functional.normalize(t, dim=-1).detach().requires_grad_() for t in qkv()],
        gate()[..., 0].contiguous(), beta())),
    "rms_norm": lambda: backward(RMSNorm(D).cuda()(torch.randn(B, T, D, device="cuda", requires_grad=True))),
    "layer_norm": lambda: backward(LayerNorm(D).cuda()(torch.randn(B, T, D, device="cuda", requires_grad=True))),
    "group_norm": lambda: backward(GroupNorm(4, D).cuda()(torch.randn(B, T, D, device="cuda", requires_grad=True))),
}
failed = 0
budget = float(os.environ.get("FLA_OPS_SECONDS", "inf"))
started = time.monotonic()
for name, call in calls.items():
    if time.monotonic() - started > budget:
        print(f"not run (past FLA_OPS_SECONDS): {name}", flush=True)
        continue
    try:
        call()
        torch.cuda.synchronize()
        print(f"ok {name}", flush=True)
    except Exception as e:  # one operator's failure is reported; the others still run
        failed += 1
        print(f"FAILED {name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
sys.exit(1 if failed else 0)
