"""What the fork server and its zygotes share to fork a cell: the channel's file descriptors,
the heap freeze before a fork, reaping, and the child's side of a fork (its session, its files,
its cell). The warm-up before forking is warm_up.py.
"""
import gc
import os
import signal
import sys

from ..base import at_fork
from ..cell import child as cell_child

COMMAND_FD = 3
EVENT_FD = 4


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


def run_child(command, parent, inherited=(COMMAND_FD, EVENT_FD)):
    """In the forked child (`command`: a channel_messages.ForkCommand): become a session leader,
    take the cell's files, compile, exit; die with `parent`, the process that forked it, the
    server or a zygote
    (cell_child.run_cell_and_exit); a cell whose code killed its parent cannot signal
    triton-portcheck, to which it is re-parented until then (signal_guard)."""
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(command.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(command.stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
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
        if not command.batch:  # a batch's leader forks its cells: each registers them
            at_fork.register_recorded()
    except BaseException:  # report on whatever stderr we have; the supervisor sees the status
        import traceback
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(_CHILD_FAILED)
    if command.batch:
        cell_child.run_batch(command, failure_code=_CHILD_FAILED, parent=parent)
    cell_child.run_cell_and_exit(command.request, command.result, command.progress,
                                failure_code=_CHILD_FAILED, parent=parent)


# The status of a forked cell that failed outside its compile (EX_SOFTWARE).
_CHILD_FAILED = 70
