"""The forked child that runs one cell's user code (import and compile), in both isolation modes.

The user's code may kill its parent (`os.kill(os.getppid(), 9)`). Its parent is therefore never
triton-portcheck itself: with `--isolation fork` it is the fork server (server.py), with
`--isolation process` the cell's worker process, which forks this child and waits
(`run_forked`). The child dies with that parent (PR_SET_PDEATHSIG), but the kernel re-parents it
to triton-portcheck (a subreaper) before sending that signal; its seccomp filter (signal_guard)
keeps a `kill(getppid())` in that window from reaching the tool.

`run_forked` leaves two marks in the progress file around the child's life, so the supervisor can
tell a worker killed by its own child (forked, never saw the child end) from a child that died of
a signal, which the worker passes on by dying of the same signal.
"""
import ctypes
import os
import resource
import signal
import sys
import traceback

from . import batch, handlers
from ..base import at_fork, forks, messages, protocol, signal_guard
from ..compile import shared_backend, stages

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent):
    """In a forked child: SIGKILL as soon as `parent` dies. The kernel sends it when the parent
    exits, the moment this process would be re-parented; a parent that died before prctl() took
    effect is caught by the getppid() check that follows."""
    if signal_guard.LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def run_batch(command, failure_code, parent):
    """In the child forked by `parent` for a batch of cells (batch.py; `command`: the
    channel_messages.ForkCommand): imports the cells' module once, then forks each cell from that
    state and waits for it. Never returns."""
    def run():
        die_with_parent(parent)
        signal_guard.install()
        shared_backend.enable(command.batch_log + _SHARED_SUFFIX)
        leader = os.getpid()

        def prepare(cell):
            # As a zygote imports: the import's own at-fork handlers run at each cell's own later
            # forks (each cell registers them as it starts), not at its birth from this process.
            with at_fork.recording():
                stages.import_for(messages.cell_request(protocol.read_request(cell.request)))

        def fork_cell(cell, first):
            pid = forks.quiet_fork()
            if pid == 0:
                _run_batch_cell(cell, first, leader, failure_code)  # never returns
            return _wait(pid)

        batch.run(command.batch, command.batch_log, prepare, fork_cell, forks.threads_now)

    _run_and_exit(run, failure_code)


# Beside the batch log: the backend outcomes its cells share (compile/shared_backend.py).
_SHARED_SUFFIX = ".shared"


def _run_batch_cell(cell, first, leader, failure_code):
    """In a cell's child of a batch's leader: as a cell forked from a zygote. Its own process
    group in the batch's session, so it cannot leave the session the tool's limits watch."""
    def run():
        die_with_parent(leader)
        os.setpgid(0, 0)
        if not first:
            batch.point_streams_at(cell)
        at_fork.register_recorded()
        handlers.run_cell_files(cell.request, cell.result, cell.progress)

    _run_and_exit(run, failure_code)


def _wait(pid):
    """(exit status as os.waitstatus_to_exitcode gives it, resource usage) of child `pid`; wait4
    retries an interrupted wait itself (PEP 475)."""
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage


def _run_and_exit(run, failure_code):
    """Runs `run()` and ends this process: 0 when it returned; an escaping exception's traceback
    on stderr and `failure_code`; a SystemExit's own status. Never returns."""
    code = failure_code
    try:
        run()
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop)
    except BaseException:  # the supervisor sees the status; the traceback goes to the cell's stderr
        try:
            traceback.print_exc()
        except BaseException:
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        os._exit(code)


def _exit_code(stop):
    """The status the interpreter itself would exit with for this SystemExit."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    sys.stderr.write(f"{stop.code}\n")
    return 1


def run_cell_and_exit(request_path, result_path, progress_path, failure_code, parent,
                     lead_group=False):
    """In the child forked by `parent`: ties its life to the parent's, runs the cell (a request of
    any kind the tool runs as a cell: compile, inspect, repro) and ends this
    process: 0 with a result written; an escaping exception's traceback on stderr and
    `failure_code`; a SystemExit's own status. Never returns: a forked child must not unwind into
    its parent's code.

    `lead_group`: become a process group leader, for a child that stays in its parent's session
    (`run_forked`): a group leader cannot setsid(), so the user's code cannot take this process
    out of the session that the supervisor's time and memory limits watch, just as it could not
    when it ran in the session's leader."""
    def run():
        die_with_parent(parent)
        if lead_group:
            os.setpgid(0, 0)
        # Before any user code: nothing it runs may signal the tool (see signal_guard). Where
        # the guard cannot be installed the probe has already warned; the cell runs regardless.
        signal_guard.install()
        handlers.run_cell_files(request_path, result_path, progress_path)

    _run_and_exit(run, failure_code)


def _die_like(sig):
    """Ends this process by `sig`, as its child ended, so the supervisor reads the child's
    signal. No core file of this process: it holds nothing of interest."""
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
    except (OSError, ValueError):  # SIGKILL and SIGSTOP take no handler and need none
        pass
    os.kill(os.getpid(), sig)
    return 128 + sig  # a signal whose default is to be ignored: the child could not die of it


def run_forked(request_path, result_path, progress_path):
    """The worker of `--isolation process`: runs the cell in a child and ends as it ended (its
    exit status, or its signal). Returns the status to exit with."""
    parent = os.getpid()
    _note(progress_path, protocol.MARK_CHILD_FORKED)  # before fork(): the child may kill us at once
    pid = os.fork()
    if pid == 0:
        run_cell_and_exit(request_path, result_path, progress_path, failure_code=1, parent=parent,
                         lead_group=True)
    _, status = os.waitpid(pid, 0)
    _note(progress_path, protocol.MARK_CHILD_ENDED)
    if os.WIFSIGNALED(status):
        return _die_like(os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


def _note(progress_path, line):
    log = protocol.ProgressLog(progress_path)
    try:
        log.note(line)
    finally:
        log.close()
