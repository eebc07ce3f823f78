"""A script's GPU tensors, made at its top level, on the CPU: for a module imported for a cell
whose import failed only because it asked torch for a device this machine does not have.

The seed's user script does `x = torch.rand(size, device="cuda")` or `torch.rand(size).cuda()` at
module level, launches its kernel and prints the result; `capture --fake-gpu` ran it as written.
For `check`, `export` and `repro` its top level runs again when the kernel is looked up, and its
launches are skipped (top_level_launches.py), but the tensors are still made first: without a
GPU, torch refuses ("Torch not compiled with CUDA enabled", "Found no NVIDIA driver"). Such an
import is tried once more with every tensor made for "cuda" (or "hip", which torch calls "cuda")
made on the CPU instead, through a torch function mode: factory functions' `device=`, `.cuda()`,
`.to("cuda")`. The values are the script's own; nothing is launched with them.

Only an import that failed that way is tried again like this. A module whose import works (a
library that probes `torch.empty(1, device="cuda")` inside a try, say) is never imported so, since
its verdicts would change with what its probe found.
"""
import contextlib

# What torch says when asked for a GPU it cannot reach, in the versions seen (lower case).
_NO_DEVICE = ("torch not compiled with cuda enabled", "found no nvidia driver", "no cuda gpus are available",
              "cuda driver initialization failed", "no hip gpus are available")


def asked_for_a_missing_device(error):
    """Whether an import failed because torch was asked for a device there is none of."""
    text = f"{error}".lower()
    return isinstance(error, (RuntimeError, AssertionError)) and any(part in text for part in _NO_DEVICE)


def _is_gpu(device):
    if device is None:
        return False
    text = str(device)
    return text == "cuda" or text.startswith("cuda:")


@contextlib.contextmanager
def made_on_the_cpu():
    """While the module is imported again: tensors meant for the GPU are made on the CPU."""
    import torch
    from torch.overrides import TorchFunctionMode

    class OnTheCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:
                return args[0]
            if _is_gpu(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to:
                args = tuple("cpu" if _is_gpu(a) else a for a in args)
            return func(*args, **kwargs)

    with OnTheCpu():
        yield
