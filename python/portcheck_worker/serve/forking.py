"""What the fork server and its zygotes share to fork a cell: the channel's file descriptors,
the warm-up that initialises each backend once before forking, the heap freeze before a fork,
reaping, and the child's side of a fork (its session, its files, its compile).
"""
import gc
import os
import signal
import sys
import threading
import time

from . import at_fork, cell_child, handlers
from ..base import signal_guard
from ..compile import driver, releases
from ..compile.stages import make_target

COMMAND_FD = 3
EVENT_FD = 4


def warm_up(targets):
    """Compile one tiny kernel per backend, so LLVM and each backend are initialised once here
    instead of in every child (the first compile in a process costs ~0.5 s)."""
    handlers.import_triton()  # exits 3 without it, as the probe would
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
    if any(spec["backend"] == "cuda" for spec in targets):
        _resolve_nvidia_tools()
    signal_guard.prepare()
    seen = set()
    for spec in targets:
        if spec["backend"] in seen:
            continue
        seen.add(spec["backend"])
        target = make_target(spec)
        try:
            driver.install(target)
            src = release.ast_source(_portcheck_warm_up, {"x_ptr": "*fp32", "BLOCK": "constexpr"}, {(1, ): 64},
                                     {(0, ): []}, target)
            triton.compile(src, target=target, options={"num_warps": 1})
        except Exception as e:  # a broken backend shows up in the cells themselves
            errors.append(f"{spec['backend']}: {type(e).__name__}: {e}")
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


def ended_children():
    """(pid, {"code": exit status or None, "signal": signal or None, "max_rss_bytes": the
    high-water mark of its largest process}) of each child of this process that has ended,
    without waiting for any. The tool samples a cell's memory only every few tens of
    milliseconds; the kernel's own peak is exact for a cell shorter than that."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, {"code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "max_rss_bytes": usage.ru_maxrss * 1024}


def freeze_heap():
    """Before a fork: the objects alive now are left out of the garbage collector's passes, in
    this process and in the child. A collection in the child otherwise writes to every object's
    header, copying the whole inherited heap page by page: 16 ms of a cell's life with Triton
    loaded, far more with torch (gc.freeze exists for this)."""
    gc.freeze()


def run_child(command, server, inherited=(COMMAND_FD, EVENT_FD)):
    """In the forked child: become a session leader, take the cell's files, compile, exit; die
    with the server (cell_child.compile_and_exit); a cell whose code killed the server cannot
    signal triton-portcheck, to which it is re-parented until then (signal_guard)."""
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(command["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(command["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        # Where the process it was forked from had 0-2 closed, the opens above took them: those
        # are the cell's standard streams now, and stay open.
        for fd in {null, out, err, *inherited} - {0, 1, 2}:
            try:
                os.close(fd)
            except OSError:
                pass
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        at_fork.register_recorded()
    except BaseException:  # report on whatever stderr we have; the supervisor sees the status
        import traceback
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(_CHILD_FAILED)
    if command.get("batch"):
        cell_child.run_batch(command, failure_code=_CHILD_FAILED, parent=server)
    cell_child.compile_and_exit(command["request"], command["result"], command["progress"],
                                failure_code=_CHILD_FAILED, parent=server)


# The status of a forked cell that failed outside its compile (EX_SOFTWARE).
_CHILD_FAILED = 70
