"""Calls flag_gems's operators whose launch options come from its per-vendor tables
(runtime/backend/_<vendor>/tune_configs.yaml: mm, bmm, addmm, softmax, log_softmax, layer_norm,
cross_entropy_loss, mv, var_mean, vector_norm, ...) on small tensors of the GPU's torch device,
for `capture --mode record --as cuda:90,hip:gfx942` (bench/h200/flag_gems_personas.sh). Each
call is one try: an operator that fails under a persona is reported and the rest go on."""
import sys

import torch

import flag_gems

print("flag_gems vendor:", flag_gems.vendor_name, flush=True)
d = "cuda"
a16, b16 = torch.randn(256, 512, device=d, dtype=torch.float16), torch.randn(512, 128, device=d, dtype=torch.float16)
x = torch.randn(64, 1000, device=d)
calls = {
    "mm": lambda: torch.mm(a16, b16),
    "bmm": lambda: torch.bmm(a16.view(4, 64, 512), b16.view(4, 512, 32)),
    "addmm": lambda: torch.addmm(torch.randn(128, device=d, dtype=torch.float16), a16, b16),
    "mv": lambda: torch.mv(x, torch.randn(1000, device=d)),
    "softmax_inner": lambda: torch.softmax(x, dim=-1),
    "softmax_non_inner": lambda: torch.softmax(x.view(64, 10, 100), dim=1),
    "log_softmax": lambda: torch.log_softmax(x, dim=-1),
    "layer_norm": lambda: torch.nn.functional.layer_norm(x, (1000, )),
    "cross_entropy": lambda: torch.nn.functional.cross_entropy(x, torch.randint(0, 1000, (64, ), device=d)),
    "var_mean": lambda: torch.var_mean(x, dim=1),
    "vector_norm": lambda: torch.linalg.vector_norm(x, dim=1),
    "triu": lambda: torch.triu(x),
    "masked_fill": lambda: x.masked_fill(x > 0, 0.0),
    "count_nonzero": lambda: torch.count_nonzero(x),
    "sum": lambda: x.sum(dim=1),
    "add": lambda: x + x,
}
with flag_gems.use_gems():
    for name, call in calls.items():
        try:
            call()
            print(f"{name}: called", flush=True)
        except Exception as e:  # one operator's failure is its own line
            print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
sys.exit(0)
