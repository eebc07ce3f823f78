"""What a user's module did to the standard library Triton and this worker run on.

A module may replace `builtins.open`, `json.dumps` or `os.write` with None at import (by mistake
or on purpose). The worker's own plumbing holds the originals (protocol.py binds them at its
import, before any user code), so it keeps working; Triton does not, and would fail later at some
stage with "'NoneType' object is not callable", a verdict that blames the compiler, differs per
target and per isolation mode. So the import is the failure: the cell is an import-error naming
what the module broke, the same on every target and in both isolation modes.

A name replaced by another callable (a monkeypatch: gevent, a tracer, a test double) is the
module's business and is left alone; only a name that is gone or no longer callable is reported.
"""
import builtins
import importlib
import io
import json
import os
import pickle
import subprocess
import sys
import tempfile

# (module, names): what Triton's compile and this worker call after the user's import.
_WATCHED = (
    (builtins, ("open", "print", "len", "isinstance", "getattr", "hasattr", "str", "repr", "int",
                "float", "dict", "list", "tuple", "set", "sorted", "min", "max", "iter", "next")),
    (json, ("dumps", "dump", "loads", "load", "JSONEncoder", "JSONDecoder")),
    (os, ("open", "read", "write", "close", "replace", "rename", "fstat", "stat", "getpid",
          "fork", "waitpid", "kill", "_exit", "makedirs", "remove", "unlink", "listdir", "fspath")),
    (io, ("open",)),
    (sys, ("exit", "getrecursionlimit", "setrecursionlimit")),
    (subprocess, ("Popen", "run", "check_output", "check_call")),
    (tempfile, ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory")),
    (pickle, ("dumps", "loads")),
    (importlib, ("import_module",)),
)

_MISSING = object()
# Bound now: the check itself must not call what it checks.
_getattr, _callable, _type = getattr, callable, type
_ORIGINALS = {(module.__name__, name): getattr(module, name) for module, names in _WATCHED
              for name in names}


def broken_names():
    """'json.dumps = None', 'builtins.open is gone', ...: each watched name the process no longer
    has as a callable, in a stable order."""
    found = []
    for module, names in _WATCHED:
        for name in names:
            value = _getattr(module, name, _MISSING)
            if value is _ORIGINALS[(module.__name__, name)] or _callable(value):
                continue
            # Never the value's repr: that would run the user's code again.
            if value is _MISSING:
                shown = "is gone"
            elif value is None:
                shown = "= None"
            else:
                shown = f"= a {_type(value).__name__}"
            found.append(f"{module.__name__}.{name} {shown}")
    return found
