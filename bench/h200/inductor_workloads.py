"""torch.compile on real workloads, for `capture --mode live` (bench/h200/inductor_live.sh): a
pointwise chain, a reduction, softmax, layer norm, and a matmul under max-autotune so that
Inductor's Triton mm template competes. Each result is compared with eager PyTorch."""
import torch

torch.manual_seed(0)
device = "cuda"
x = torch.randn(512, 1024, device=device)
a = torch.randn(1024, 1024, device=device, dtype=torch.float16)
b = torch.randn(1024, 1024, device=device, dtype=torch.float16)
norm = torch.nn.LayerNorm(1024, device=device)

WORKLOADS = [
    ("pointwise", lambda t: (t * 2 + 1).relu() * torch.sigmoid(t), (x, ), None),
    ("reduction", lambda t: t.sum(dim=-1), (x, ), None),
    ("softmax", lambda t: torch.softmax(t, dim=-1), (x, ), None),
    ("layer_norm", lambda t: norm(t), (x, ), None),
    ("matmul", lambda p, q: p @ q, (a, b), "max-autotune-no-cudagraphs"),
]

with torch.no_grad():
    for name, fn, args, mode in WORKLOADS:
        got = torch.compile(fn, mode=mode)(*args)
        tolerance = 1e-2 if got.dtype == torch.float16 else 1e-4
        torch.testing.assert_close(got, fn(*args), atol=tolerance, rtol=tolerance)
        print(f"{name}: ok")
