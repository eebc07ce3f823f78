"""The warm-up of the fork server and its zygotes: one tiny kernel compiled per backend before
the first fork, so that LLVM and each backend are initialised once in the process that forks
instead of in every cell it forks (the first compile in a process costs ~0.5 s).
"""
import threading
import time

from ..base import signal_guard
from ..compile import driver, releases
from ..compile.releases import import_triton
from ..compile.stages import make_target


def warm_up(targets):
    """Compile one tiny kernel per backend (`targets`: messages.Target), so LLVM and each backend
    are initialised once here instead of in every child (the first compile in a process costs
    ~0.5 s)."""
    import_triton()  # exits 3 without it, as the probe would
    import triton
    import triton.language as tl

    @triton.jit
    def _portcheck_warm_up(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)

    release = releases.current()
    release.prepare()
    # Compiled, never read from Triton's cache: a zygote warms up after the server, whose warm-up
    # kernel is then in the cache, and a hit would initialise nothing (0.04 s more per cell).
    release.always_compile()
    started = time.perf_counter()
    errors = []
    if any(spec.backend == "cuda" for spec in targets):
        _resolve_nvidia_tools()
    signal_guard.prepare()
    seen = set()
    for spec in targets:
        if spec.backend in seen:
            continue
        seen.add(spec.backend)
        target = make_target(spec)
        try:
            driver.install(target)
            src = release.ast_source(_portcheck_warm_up, {"x_ptr": "*fp32", "BLOCK": "constexpr"}, {(1, ): 64},
                                     {(0, ): []}, target)
            triton.compile(src, target=target, options={"num_warps": 1})
        except Exception as e:  # a broken backend shows up in the cells themselves
            errors.append(f"{spec.backend}: {type(e).__name__}: {e}")
        finally:
            driver.uninstall()
    return {"seconds": time.perf_counter() - started, "errors": errors,
            "threads": threading.active_count()}


def _resolve_nvidia_tools():
    """Triton finds each NVIDIA tool by running `TOOL --version` the first time it is asked for it,
    and remembers the answer per process (NvidiaTool.from_path is lru_cached). Asked here, once,
    every forked child inherits the answers: otherwise each CUDA cell ran `cuobjdump --version`
    (and `ptxas --version` for the ptxas the warm-up did not use) before its real work."""
    release = releases.current()
    for name in release.nvidia_tool_names():
        try:
            release.nvidia_tool(name)
        except Exception:  # a tool this Triton lacks fails in the cell that needs it, as before
            pass
