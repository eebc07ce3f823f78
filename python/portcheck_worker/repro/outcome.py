"""Running a reproducer: `python FILE [--result PATH] [--progress PATH]` compiles the recorded
specialisation (compile/portable.py) and says how the outcome compares with what the cell had.

Like portable.py, a reproducer carries this module's text (repro/script.py), so it imports only
the standard library and Triton, and portable's names, which the file defines above it.
"""
import contextlib
import json
import os
import re
import sys
import traceback

from ..compile.cubin import Unreadable, resources
from ..compile.launch_rules import launch_check
from ..compile.portable import compile_recorded, error_message


def same_failure(recorded_message, text):
    """Whether every word of the recorded message is in `text` (numbers aside): the compiler
    says the same thing, whatever its release added around it."""
    def words(s):  # an address (0x7f3a...) is a number too: its letters are no word
        return set(re.findall(r"[A-Za-z_][A-Za-z_]+", re.sub(r"\b0x[0-9a-fA-F]+", " ", s or "")))
    return words(recorded_message) <= words(text)


def cuda_registers(compiled):
    """Registers per thread of a CUDA kernel, read from its cubin as the cell's were
    (compile/cubin.py, which a reproducer carries too); by the cuobjdump Triton bundles where the
    cubin is not laid out as cubin.py knows; None where neither can tell (an AMD target)."""
    import subprocess
    import tempfile
    if "cubin" not in compiled.asm:
        return None
    try:
        return resources(compiled.asm["cubin"], compiled.metadata.name)["registers"]
    except Unreadable:
        pass
    try:
        from triton import knobs
        tool = knobs.nvidia.cuobjdump.path
    except Exception:  # before 3.4: no knobs
        try:
            from triton.backends.nvidia.compiler import _path_to_binary
            tool = _path_to_binary("cuobjdump")[0]
        except Exception:
            return None
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(compiled.asm["cubin"])
        f.flush()
        out = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True,
                             timeout=60).stdout
    m = re.search(r"\bREG:(\d+)", out)
    return int(m.group(1)) if m else None


def _flags(argv):
    flags = {}
    for name, value in zip(argv[::2], argv[1::2]):
        if name not in ("--result", "--progress"):
            sys.exit(f"usage: python {os.path.basename(sys.argv[0])} [--result FILE] [--progress FILE]")
        flags[name[2:]] = value
    if len(argv) % 2:
        sys.exit(f"usage: python {os.path.basename(sys.argv[0])} [--result FILE] [--progress FILE]")
    return flags


def _progress_writer(path):
    """"stage NAME" lines, as the worker writes them: triton-portcheck reads which stage a
    compile that ran out of time was in."""
    if not path:
        return None

    def mark(stage):
        with open(path, "a") as f:
            f.write(f"stage {stage}\n")

    return mark


class Child:
    """The compile of a standalone run, in a child process: what it prints on file descriptor 2
    (MLIR's diagnostics) goes to a file the parent shows afterwards, whatever way the child ends;
    the stages it starts come back through a pipe; a crash or a hang is the parent's to say."""

    def __init__(self, run):
        import tempfile
        self.stderr = tempfile.TemporaryFile()
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(read_end)
            os.dup2(self.stderr.fileno(), 2)
            code = run(lambda stage: os.write(write_end, f"{stage}\n".encode()), self.stderr_text)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        os.close(write_end)
        self.read_end, self.stage = read_end, "frontend"

    def stderr_text(self):
        sys.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def wait(self, limit, max_rss=None):
        """The child's wait status and what stopped it: None when it ended by itself, "time" when
        it was still running after `limit` seconds, "memory" when it and its descendants together
        held more than `max_rss` bytes, sampled as triton-portcheck samples a cell (its high-water
        mark counted too). A stopped child is killed with its descendants."""
        import select
        import time
        deadline, ended, stopped = time.monotonic() + (limit or 1e9), False, None
        while not ended and stopped is None:
            left = max(0.0, deadline - time.monotonic())
            # A walk of /proc costs a few milliseconds: every 50 ms, a tenth of a core at most.
            if select.select([self.read_end], [], [], min(left, 0.05) if max_rss else left)[0]:
                data = os.read(self.read_end, 4096)
                ended = not data
                self.stage = data.decode().split()[-1] if data.split() else self.stage
            if not ended and max_rss and process_tree(self.pid)[1] > max_rss:
                stopped = "memory"
            elif not ended and time.monotonic() >= deadline:
                stopped = "time"
        os.close(self.read_end)
        if stopped:
            kill_tree(self.pid)
        _, status, usage = os.wait4(self.pid, 0)
        if stopped is None and max_rss and usage.ru_maxrss * 1024 > max_rss:
            stopped = "memory"  # over it between two samples: over it all the same, as check judges
        sys.stderr.write(self.stderr_text())
        return status, stopped


def process_tree(root):
    """The process `root` and its descendants, and their resident memory together in bytes, read
    from /proc as triton-portcheck reads a cell's (empty, 0 where there is no /proc)."""
    page = os.sysconf("SC_PAGE_SIZE")
    children, rss = {}, {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # after the command, which may hold ")"
        except (OSError, IndexError):
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(name))
        rss[int(name)] = int(fields[21]) * page
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found, sum(rss.get(pid, 0) for pid in found)


def kill_tree(root):
    import signal
    for pid in process_tree(root)[0]:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def size_text(size):
    """419430400 -> "400 MiB", as a manifest's max_rss is written."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def run_standalone(kernel, cell, recorded, where):
    """`python FILE`: the compile in a child (Child); a hang stops at the cell's time limit, a
    compile past the cell's memory limit is stopped there, a crash is said with its signal and
    stage. Exit 1 while it fails, 0 once it compiles."""
    import signal
    limit, max_rss = recorded.get("time_limit_s"), recorded.get("max_rss_bytes")
    if limit:
        print(f"the cell ran out of time ({limit:g} s, triton-portcheck's limit): this run stops there too",
              flush=True)
    if max_rss:
        print(f"the cell exceeded its memory limit ({size_text(max_rss)} for its processes together, "
              "triton-portcheck's limit): this run stops there too", flush=True)
    child = Child(lambda progress, stderr: _compile_and_say(kernel, cell, recorded, where, progress, stderr))
    status, stopped = child.wait(limit, max_rss)
    if stopped == "time":
        print(f"reproduces: {where} is still compiling, in stage {child.stage}, after {limit:g} s")
        return 1
    if stopped == "memory":
        same = recorded.get("kind") == "oom" and recorded.get("stage") == child.stage
        was = f" (recorded: {recorded.get('kind')} in {recorded.get('stage')})"
        print(f"{'reproduces' if same else 'fails differently'}: {where} exceeded the memory limit "
              f"({size_text(max_rss)}) in stage {child.stage}{'' if same else was}")
        return 1
    if os.WIFSIGNALED(status):
        died = signal.Signals(os.WTERMSIG(status)).name
        verdict = "reproduces" if recorded.get("kind") in ("crash", "oom") else "fails differently"
        print(f"{verdict}: {where} crashed ({died}) in stage {child.stage}")
        return 1
    return os.waitstatus_to_exitcode(status)


def reproduce(kernel, cell, recorded, argv):
    """With --result (triton-portcheck runs it and judges the outcome as a cell: it times the
    run and reads a crash from the exit status), the compile's outcome in the worker's result form,
    exit 0; else run_standalone."""
    import triton
    flags = _flags(argv)
    where = f"Triton {triton.__version__} for {cell['target'][0]}:{cell['target'][1]}"
    if not flags.get("result"):
        return run_standalone(kernel, cell, recorded, where)
    compiled, stage, error = compile_recorded(kernel, cell, _progress_writer(flags.get("progress")))
    result = _failure(stage, error) if error is not None else _compiled(compiled, cell, recorded)[0]
    result["triton_version"] = triton.__version__
    with open(flags["result"], "w") as f:
        json.dump(result, f)
    return 0


def _failure(stage, error):
    return {"status": "error", "stage": stage, "error": {
        "type": f"{type(error).__module__}.{type(error).__name__}", "message": error_message(error),
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__))}}


def _compiled(compiled, cell, recorded):
    """The result of a compile that succeeded, and what of it exceeds the recorded target's
    launch limits (launch_check, the worker's own rules, which this file carries above it)."""
    md = compiled.metadata._asdict()
    metadata = {k: md[k] for k in ("name", "num_warps", "num_ctas", "num_stages", "shared", "tmem_size",
                                  "cluster_dims", "warp_size") if k in md}
    limits = recorded.get("launch_limits")
    registers = cuda_registers(compiled) if limits else None
    result = {"status": "ok", "metadata": metadata, "resources": {"registers": registers} if registers else {}}
    if not limits:
        return result, []
    backend, arch, warp_size = cell["target"]
    result["launch"] = launch_check(metadata, registers, limits, f"{backend}:{arch}", warp_size)
    return result, result["launch"]["problems"]


def _compile_and_say(kernel, cell, recorded, where, progress, stderr_text):
    compiled, stage, error = compile_recorded(kernel, cell, progress)
    if error is not None:
        text = error_message(error)
        same = stage == recorded.get("stage") and same_failure(recorded.get("message"), text + stderr_text())
        print(f"{'reproduces' if same else 'fails differently'}: {where} fails in stage {stage}"
              f"{'' if same else ' (recorded: ' + str(recorded.get('stage')) + ', ' + str(recorded.get('message')) + ')'}")
        print(f"{type(error).__name__}: {text}")
        return 1
    result, problems = _compiled(compiled, cell, recorded)
    if problems:
        print(f"reproduces: {where} compiles, and the kernel cannot launch there:")
        print("\n".join(f"  {p}" for p in problems))
    else:
        print(f"no longer reproduces: {where} compiles it")
    print(f"metadata: {json.dumps(result['metadata'])}")
    return 1 if problems else 0
