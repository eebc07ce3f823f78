"""Calls flag_gems' pointwise ops on CPU tensors (through fg_cpu, loaded when flag_gems is
imported: see fg_install.py): each op's kernel is generated at run time into a file that
flag_gems loads under a module name outside sys.modules and then hands its op module's globals.
`capture` saves each such module beside the manifest (portcheck-generated/) so `check` can
compile it. README.md beside this file has the command and what it gave.

A failing op (flag_gems' `where` asserts a GPU) is reported and the others still run."""
import torch

import flag_gems

x, y = torch.randn(64), torch.randn(64)
OPS = {
    "erf": lambda: torch.erf(x),
    "abs": lambda: torch.abs(x),
    "gelu": lambda: torch.nn.functional.gelu(x),
    "add": lambda: torch.add(x, y),
    "mul": lambda: torch.mul(x, 2.0),
    "exp": lambda: torch.exp(x),
    "sigmoid": lambda: torch.sigmoid(x),
    "gt": lambda: torch.gt(x, 0.0),
    "where": lambda: torch.where(x > 0, x, y),
}
with flag_gems.use_gems():
    for name, op in OPS.items():
        try:
            op()
        except Exception as e:  # noqa: BLE001  (a flag_gems limitation on CPU, not ours)
            print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0]}")
print("done")
