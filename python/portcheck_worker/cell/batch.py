"""A batch: several cells of one kernel module and target, run by one forked process, so that the
fork of a zygote (copying the page tables of a gigabyte of torch), the child's setup and the
module's import are paid once per batch instead of once per cell (issue 43).

The batch's process is a leader: it imports the cells' module (where the zygote has not), as each
cell alone would, and then forks one child per cell from that state. A cell's own code (its
constexpr functions, heuristics, hooks, the compile) runs only in its child, which ends with it:
no cell can leave anything for the next one, whatever it changes (issue 50), because every cell
starts from the same state, the leader's after the import. That is the guarantee by construction;
no list of things to compare could be complete.

Each cell reads and writes its own files (request, result, progress, stdout and stderr on
descriptors 1 and 2) exactly as it would alone. The batch log tells the tool when each cell
begins and when its result is written, in `time.monotonic()` seconds, the tool's steady clock:
"begun ID T THREADS" (THREADS: the leader's threads when it forked the cell, a fork hazard as a
zygote's) and "done ID T MAXRSS" (the child's peak resident memory, which the kernel measured,
in bytes). The tool gives each cell its own time and memory limits from its beginning. A cell
whose child ended without its result (a crash, exit(), a limit) ends the batch and is left to
the tool, which runs it again alone; the cells the batch never began are started anew elsewhere.
"""
import gc
import os
import sys
import time

from ..base import channels, protocol

BEGUN = channels.BATCH_BEGUN
DONE = channels.BATCH_DONE
# The tool creates the log's path + this when it wants the cells not yet begun back (a batch that
# runs past its expected time, or cores idle while it holds cells); looked for before each cell.
STOP_SUFFIX = channels.BATCH_STOP_SUFFIX

_monotonic = time.monotonic


class Log:
    """Appends the marks to the batch log; the descriptor kept high, as a cell's progress log,
    since the import may dup2() anything over low numbers."""

    def __init__(self, path):
        self._progress = protocol.ProgressLog(path)

    def mark(self, what, cell_id, figure):
        self._progress.note(f"{what} {cell_id} {_monotonic():.6f} {int(figure)}")

    def close(self):
        self._progress.close()


def point_streams_at(cell):
    """Descriptors 1 and 2 (and so the compiler's diagnostics, ptxas's output) to the cell's
    files (`cell`: a channel_messages.BatchCell), truncated as a fresh process's would be."""
    for fd, path in ((1, cell.stdout), (2, cell.stderr)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)


def run(cells, log_path, prepare, fork_cell, threads):
    """`prepare(first cell)` imports the cells' module, as a zygote would have; then each cell runs
    in a child of its own: `fork_cell(cell, first)` forks it (the first cell's streams already
    point at its files: what the import printed is its output, as alone) and returns its wait
    status and resource usage. `threads()`: how many threads this process has now. A `prepare`
    that fails ends the batch before any cell begins: each cell says it alone."""
    log = Log(log_path)
    try:
        point_streams_at(cells[0])
        try:
            prepare(cells[0])
        except Exception:
            return
        _flush()
        # What the import made stays out of the collector's passes in every child: a collection
        # there would otherwise copy the whole inherited heap, page by page.
        gc.freeze()
        for index, cell in enumerate(cells):
            if index > 0 and os.path.exists(log_path + STOP_SUFFIX):
                return  # the tool gives the rest to other processes
            log.mark(BEGUN, cell.id, threads())
            status, usage = fork_cell(cell, index == 0)
            if status != 0 or not os.path.exists(cell.result):
                return  # ended without its result: the tool runs it alone
            log.mark(DONE, cell.id, usage.ru_maxrss * 1024)
    finally:
        log.close()


def _flush():
    """Before a fork: what the import printed is written once, by this process, not again by
    every child that inherits the buffer."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
