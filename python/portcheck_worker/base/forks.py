"""Forking a process that may hold threads (the user's import, torch, CUDA and OpenMP start their
own): how many it has, which every fork reports as its hazard, and the fork itself, quietly."""
import os
import threading
import warnings


def threads_now():
    """Threads of this process, native ones included."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def quiet_fork():
    """fork(), quietly: Python 3.12 warns about forking with threads, and a user's warning filter
    may turn that warning into an exception in this process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return os.fork()
