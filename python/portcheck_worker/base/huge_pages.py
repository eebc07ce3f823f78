"""Backing a process's anonymous memory with transparent huge pages before it forks many children.

fork() copies the page table entries of every anonymous page and takes a reference on each page;
the child's exit drops them again. A process holding torch and Triton has about 300 MB of
anonymous memory, 75,000 small pages: measured on a 2-core machine, 6-7 ms to fork it and 8-13 ms
to tear the child down, paid once per cell where cells are forked from a warm process. The same
memory in 2 MB pages is 150 entries: 2-3 ms and 2-6 ms. A child's write to a shared huge page
splits it and copies only the small page written (Linux 5.8 and later), so a cell's memory and
its page faults stay as they were.

MADV_COLLAPSE (Linux 6.1) turns what is mapped now into huge pages; the system's THP setting
("madvise" here) need not ask for them. Where the kernel lacks it, or refuses, nothing changes:
this is a speed-up, never a requirement. Only ranges already mapped are collapsed; the
process's later allocations are left to the system's setting. A collapse fills the holes of a
partly used 2 MB range (18 MB more for 300 MB, measured): a cell forked from such a process that
goes over its memory limit is therefore run again in a fresh one (check/cell_run.cpp).
"""
import ctypes
import ctypes.util

MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20

_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_LIBC.madvise.restype = ctypes.c_int


def anonymous_ranges(maps_text):
    """(start, end) of each private writable anonymous mapping (the heap included) in the text of
    /proc/PID/maps, trimmed to whole huge pages; ranges smaller than one are left out."""
    ranges = []
    for line in maps_text.splitlines():
        fields = line.split()
        if len(fields) < 5 or fields[1] != "rw-p" or (len(fields) > 5 and fields[5] != "[heap]"):
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        start = (low + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
        end = high & ~(HUGE_PAGE - 1)
        if end > start:
            ranges.append((start, end))
    return ranges


def collapse_anonymous_memory():
    """Asks the kernel to back this process's anonymous memory with huge pages now. Returns how
    many ranges it collapsed (0 where it cannot). Takes about 140 ms for 300 MB the first time,
    30 ms again in a child that inherited them."""
    try:
        with open("/proc/self/maps") as maps:
            ranges = anonymous_ranges(maps.read())
    except OSError:
        return 0
    # A kernel without MADV_COLLAPSE answers EINVAL at once: a few dozen calls that fail.
    return sum(_LIBC.madvise(start, end - start, MADV_COLLAPSE) == 0 for start, end in ranges)
