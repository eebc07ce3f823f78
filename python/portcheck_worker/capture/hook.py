"""Records, inside the user's own Python process, every specialisation Triton is asked to compile.

`triton-portcheck capture -- CMD` puts a `sitecustomize` on PYTHONPATH that calls `start()`. Nothing
is imported until the program imports Triton itself; then Triton is patched in place:

- interpret: kernels run in Triton's CPU interpreter, where no JIT hook fires. Each launch is
  handed, unchanged, to a shadow `JITFunction` of the same Python function, run as a warm-up under
  a stand-in CUDA driver with `jit_cache_hook` answering "skip": the JIT's own binder and
  `_pack_args` then produce exactly the specialisation a GPU launch would, and nothing compiles.
- record: the JIT itself runs under the stand-in driver; the hook records and skips compile and
  launch (kernels do not run, so tests that check results fail).
- live: the JIT compiles and launches on the real device; the hook only records.

Autotuned kernels contribute one record per config. In the CPU modes the autotuner is asked for
each config in turn (so `@triton.heuristics` inside it are applied by Triton's own code) and, in
interpret mode, the first config then runs for real so the test sees a result.

One JSON line per distinct launch goes to a file of this process in $PORTCHECK_CAPTURE_DIR.
Anything going wrong here must never break the user's program: it is reported on stderr once.
"""
import importlib
import os
import sys

from . import fake_gpu, inductor as capture_inductor
from ..base import channels
from .imports import after_import, warn
from .recorder import Recorder

ENV_DIR = channels.ENV_CAPTURE_DIR
ENV_MODE = channels.ENV_CAPTURE_MODE
ENV_HOOK_DIR = channels.ENV_CAPTURE_HOOK_DIR
MODES = ("interpret", "record", "live")


def run_sitecustomize():
    """Called by the generated sitecustomize: chain the one ours shadows, then start."""
    hook_dir = os.environ.get(ENV_HOOK_DIR)
    if hook_dir:
        _chain_sitecustomize(os.path.realpath(hook_dir))
    try:
        start()
    except Exception as e:  # never break the user's interpreter
        warn(f"capture could not start: {type(e).__name__}: {e}")


def _chain_sitecustomize(hook_dir):
    ours = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != hook_dir]
    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
    finally:
        if "sitecustomize" not in sys.modules and ours is not None:
            sys.modules["sitecustomize"] = ours
        # Back where it was: programs that start Python with PYTHONPATH made of their sys.path
        # (torch.compile's compile workers) must start it with the hook too.
        for index, entry in enumerate(saved):
            if os.path.realpath(entry or os.curdir) == hook_dir and entry not in sys.path:
                sys.path.insert(min(index, len(sys.path)), entry)


def start():
    out_dir = os.environ.get(ENV_DIR)
    mode = os.environ.get(ENV_MODE, "interpret")
    if not out_dir or mode not in MODES:
        return
    recorder = Recorder(out_dir, mode)
    if recorder.device.persona is not None:
        after_import("torch", recorder.device.persona.patch_torch)
    if recorder.device.fake_gpu:
        after_import("torch", lambda torch: fake_gpu.install(recorder, recorder.device.persona, torch))
    after_import("triton", recorder.patch)
    after_import(capture_inductor.MODULE, lambda module: capture_inductor.install(recorder, module))
