"""A seccomp filter that keeps a cell's user code from signalling triton-portcheck or anything
above it.

Why: a process of the user's that killed its parent (the fork server, or the cell's worker) is
re-parented to triton-portcheck, which is a subreaper. PR_SET_PDEATHSIG kills it then, but the
kernel sends that signal only after the re-parenting, so a `kill(getppid(), SIGKILL)` loop can
land one call on the tool in between and end the run. With this filter installed in the process
that runs the user's code (and so in everything it starts), signals aimed at the tool, at any of
its ancestors, at their process groups, or at every process at once (`kill(-1)`) fail with EPERM
and reach no one. Signals anywhere else - the cell's own children, its parent the worker - work
as before: a cell that kills its worker is still its own `crash` cell.

What it does not cover (docs/how-it-works.md says so too): ptrace and /proc/PID/mem writes where
the system's Yama setting lets a process of the same user trace one it did not start, and any
architecture other than x86-64 and AArch64, where `install` does nothing.
"""
import ctypes
import errno
import functools
import os
import platform
import struct

from . import channels

ENV_TOOL_PID = channels.ENV_TOOL_PID
LIBC = ctypes.CDLL(None, use_errno=True)  # loaded once, before any fork (cell/child.py uses it too)

# <linux/audit.h>, <linux/seccomp.h>, <linux/filter.h>, <linux/prctl.h>
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_LD_W_ABS = 0x20   # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35      # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06      # BPF_RET | BPF_K
_OFFSET_NR, _OFFSET_ARCH = 0, 4


def _arg_low_word(index):
    """Offset of the low 32 bits of argument `index` in struct seccomp_data (little-endian).
    Every pid argument is an int, and the kernel reads only those bits."""
    return 16 + 8 * index


# Syscalls that signal (or open a handle to) a process named by a pid argument, per architecture:
# name -> (x86_64 number, aarch64 number, index of the pid argument).
_PID_SYSCALLS = {
    "kill": (62, 129, 0),
    "tgkill": (234, 131, 0),
    "rt_sigqueueinfo": (129, 138, 0),
    "rt_tgsigqueueinfo": (297, 240, 0),
    "pidfd_open": (434, 434, 0),
    "process_vm_writev": (311, 271, 0),
    "ptrace": (101, 117, 1),
}
# Refused outright: tkill names a thread id (any of the tool's threads), pidfd_send_signal a pidfd,
# which can come from open("/proc/PID") without any call the filter could check. ENOSYS, so code
# that tries them first falls back to kill(), which is checked.
_REFUSED_SYSCALLS = {"tkill": (200, 130), "pidfd_send_signal": (424, 424)}


def protected_pids(tool_pid):
    """The tool and every ancestor up to (not including) init, and their process groups, as the
    32-bit values a pid argument would carry: pid for the process, -pgid for its group, and -1."""
    values = {0xFFFFFFFF}  # kill(-1): every process this user may signal
    pid = tool_pid
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            break
        ppid, pgid = int(fields[1]), int(fields[2])
        values.add(pid & 0xFFFFFFFF)
        if pgid > 1:
            values.add(-pgid & 0xFFFFFFFF)
        pid = ppid
    return sorted(values)


def _assemble(lines):
    """Resolves a program written as (code, k, true_label, false_label) tuples and label strings
    into struct sock_filter bytes. Classic BPF jumps only forward, by an offset from the next
    instruction; a label names the instruction that follows it."""
    at, count = {}, 0
    for line in lines:
        if isinstance(line, str):
            at[line] = count
        else:
            count += 1
    out, position = [], 0
    for line in lines:
        if isinstance(line, str):
            continue
        code, k, true_label, false_label = line
        jump = {None: 0}
        for label in (true_label, false_label):
            if label is not None:
                jump[label] = at[label] - position - 1
                if not 0 <= jump[label] <= 255:
                    raise ValueError(f"BPF jump to {label} out of range: {jump[label]}")
        out.append(struct.pack("HBBI", code, jump[true_label], jump[false_label], k))
        position += 1
    return b"".join(out)


def build_filter(arch, protected):
    """The BPF program, as bytes of struct sock_filter. `arch` is a key of _AUDIT_ARCH. Any other
    syscall ABI in the same process (x32, or i386 through int 0x80) is refused with ENOSYS: its
    syscall numbers differ."""
    column = 0 if arch == "x86_64" else 1
    lines = [(_LD_W_ABS, _OFFSET_ARCH, None, None),
             (_JEQ_K, _AUDIT_ARCH[arch], None, "missing"),
             (_LD_W_ABS, _OFFSET_NR, None, None)]
    if arch == "x86_64":
        lines.append((_JGE_K, _X32_SYSCALL_BIT, "missing", None))
    for numbers in _REFUSED_SYSCALLS.values():
        lines.append((_JEQ_K, numbers[column], "missing", None))
    indexes = sorted({numbers[2] for numbers in _PID_SYSCALLS.values()})
    for numbers in _PID_SYSCALLS.values():
        lines.append((_JEQ_K, numbers[column], f"argument{numbers[2]}", None))
    lines.append((_RET_K, _SECCOMP_RET_ALLOW, None, None))
    for index in indexes:
        lines += [f"argument{index}", (_LD_W_ABS, _arg_low_word(index), None, None)]
        lines += [(_JEQ_K, value, "refuse", None) for value in protected]
        lines.append((_RET_K, _SECCOMP_RET_ALLOW, None, None))
    lines += ["missing", (_RET_K, _SECCOMP_RET_ERRNO | errno.ENOSYS, None, None),
              "refuse", (_RET_K, _SECCOMP_RET_ERRNO | errno.EPERM, None, None)]
    return _assemble(lines)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(also=()):
    """In the process about to run a cell's user code: install the filter for the tool named in
    the environment. Returns None when installed, else why not (no tool pid, another
    architecture, or a kernel or sandbox that refuses seccomp); the cell runs either way.
    `also`: more processes to protect (a zygote protects the fork server, its parent), with
    their process groups."""
    tool_pid = os.environ.get(ENV_TOOL_PID, "")
    arch = platform.machine()
    if not tool_pid.isdigit():
        return "no tool pid in the environment"
    if arch not in _AUDIT_ARCH:
        return f"no filter for architecture {arch}"
    try:
        # kill(0) signals the caller's own group: refused too when that is one of the tool's.
        refuse_own_group = -os.getpgrp() & 0xFFFFFFFF in _protected(int(tool_pid))
        extra = tuple(sorted({v & 0xFFFFFFFF for pid in also for v in (pid, -os.getpgid(pid))}))
        return _load(program_for(int(tool_pid), arch, refuse_own_group, extra))
    except (OSError, ValueError, AttributeError) as e:
        return f"{type(e).__name__}: {e}"


# Cached per process: the fork server fills both in its warm-up (prepare), so its forked cells
# inherit them instead of walking /proc and assembling the program again, once per cell.
_protected = functools.lru_cache(maxsize=4)(lambda tool_pid: tuple(protected_pids(tool_pid)))


@functools.lru_cache(maxsize=8)
def program_for(tool_pid, arch, refuse_own_group, extra=()):
    protected = sorted(set(_protected(tool_pid)) | set(extra) | ({0} if refuse_own_group else set()))
    return build_filter(arch, protected)


def prepare():
    """In the fork server: the filter its forked cells will install (each leads its own process
    group, never the tool's), computed once so that they inherit it."""
    tool_pid = os.environ.get(ENV_TOOL_PID, "")
    if tool_pid.isdigit() and platform.machine() in _AUDIT_ARCH:
        try:
            program_for(int(tool_pid), platform.machine(), False)
        except (OSError, ValueError):
            pass  # each cell tries again, and the probe has said why it cannot


def _load(program):
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or LIBC.prctl(
            _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return None

def check():
    """Whether `install` works here, tried in a throwaway child so that this process stays
    unfiltered: None if it does, else why not (for the probe, which the tool turns into a
    warning)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            try:
                why_not = install() or ""
            except Exception as e:  # any failure means the guard is off
                why_not = f"{type(e).__name__}: {e}"
            os.write(write_end, why_not.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        why_not = answer.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return why_not or None
