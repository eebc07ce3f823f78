"""Exact sharing of backend work between the cells of one batch (cell/batch.py).

Triton's backend stages (ttir, ttgir, llir, ptx or amdgcn, cubin or hsaco) take two things: the
module the frontend produced and the compile's metadata (the target, the parsed options, the
cache-invalidating environment). Cells whose frontend printed the same TTIR under the same
metadata therefore get the same binary, or the same failure: rows of one kernel whose
specialisations differ only where the kernel never looks. The first such cell runs the backend;
each later one stops after its own frontend and takes that outcome, with what the compiler printed
on descriptor 2, marked as shared with the first: proven equal, where `--reduce` assumes it.

Each cell of a batch runs in a child of its own, so an outcome goes to the batch's folder, one
file per key written whole (atomically) by the cell that reached it, and later cells read it from
there; a file that is not one we wrote whole is a miss.

`key` is also reported for every compiled cell (`ttir_key`), so that a run can be measured for
what it could share (bench/ttir_sharing.py).
"""
import base64
import copy
import hashlib
import json
import os

from ..base import protocol

# A reproducible compile's metadata without what names the specialisation rather than the code.
_NOT_THE_CODE = ("hash", )
_STDERR_LIMIT = 1 << 20

_folder = None  # where a batch's outcomes are kept; None outside a batch


class Outcome:
    """What the backend gave the first cell of a key: its result (or failure) and its stderr."""

    def __init__(self, row, result, stderr):
        self.row, self.result, self.stderr = row, result, stderr


class Shared(Exception):
    """Raised at the first backend stage of a cell whose backend work was done already."""

    def __init__(self, outcome, own_hash):
        super().__init__(f"the backend's outcome is that of {outcome.row}")
        self.outcome, self.own_hash = outcome, own_hash


def enable(folder):
    """From now on, cells forked from this process share through `folder` (a batch's leader
    calls it once)."""
    global _folder
    os.makedirs(folder, exist_ok=True)
    _folder = folder


def key(module, metadata):
    """The frontend's TTIR and the metadata the backend stages read, hashed."""
    digest = hashlib.sha256(str(module).encode())
    for name in sorted(metadata):
        if name not in _NOT_THE_CODE:
            digest.update(f"\0{name}={metadata[name]!r}".encode())
    return digest.hexdigest()[:32]


def lookup(ttir_key):
    """The outcome an earlier cell of the batch reached for `ttir_key`, or None."""
    if _folder is None or ttir_key is None:
        return None
    try:
        with open(_path(ttir_key), "rb") as f:
            saved = json.load(f)
        return Outcome(saved["row"], saved["result"], base64.b64decode(saved["stderr"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(ttir_key, row, result):
    """The first outcome of a key; what this cell printed on descriptor 2 goes with it."""
    if _folder is None or ttir_key is None or os.path.exists(_path(ttir_key)):
        return
    saved = {"row": row, "result": result, "stderr": base64.b64encode(_own_stderr()).decode()}
    temporary = f"{_path(ttir_key)}.{os.getpid()}"
    try:
        with open(temporary, "w") as f:
            json.dump(saved, f, default=protocol.jsonable)
        os.replace(temporary, _path(ttir_key))
    except (OSError, TypeError, ValueError):  # not shared: each later cell runs its backend
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _path(ttir_key):
    return os.path.join(_folder, ttir_key + ".json")


def result_of(shared, stages, compile_s, source):
    """The result of a cell whose backend work `shared` stands for: its outcome, this cell's own
    frontend time and source, and what the first cell's compiler printed, printed again."""
    result = copy.deepcopy(shared.outcome.result)
    result["stages"] = dict(stages)
    result["compile_s"] = compile_s
    result["source"] = source
    result["shared_with"] = shared.outcome.row
    if isinstance(result.get("metadata"), dict) and shared.own_hash:
        result["metadata"]["hash"] = shared.own_hash
    if shared.outcome.stderr:
        os.write(2, shared.outcome.stderr)
    return result


def _own_stderr():
    """What this process wrote to descriptor 2 (a cell's stderr file), bounded."""
    try:
        with open("/proc/self/fd/2", "rb") as f:
            return f.read(_STDERR_LIMIT)
    except OSError:
        return b""
