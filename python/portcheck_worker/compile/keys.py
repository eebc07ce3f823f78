"""Result-cache keys: everything that decides a cell's outcome, hashed.

The key covers the kernel's source and that of every JIT function and constexpr global it uses
(Triton's own JITFunction.cache_key, through ASTSource.hash, with the signature, constants and
attributes), the parsed options, the target and the backend's own hash (ptxas version, AMD codegen
revision), the Triton build, the Python version, the environment variables Triton reads for
compilation, and our own version and worker source.
"""
import contextlib
import hashlib
import json
import marshal
import os
import re
import sys

from . import loader
from .stages import build_source, make_target
from ..base import channels
from ..base.frozen_json import as_json

_build_id = None
_worker_id = None


def triton_build_id():
    """Triton's version plus the size and mtime of its compiler sources and native library.

    Triton's own triton_key() hashes the contents of the same files, which takes ~0.5 s; stat()
    tells an upgraded or edited install apart just as surely for a cache.
    """
    global _build_id
    if _build_id is None:
        import triton
        root = os.path.dirname(triton.__file__)
        entries = [triton.__version__, root]
        for sub in ("compiler", "backends", "language", "runtime", "_C"):
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, sub)):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for name in sorted(filenames):
                    if name.endswith((".py", ".so", ".bc")) or name.startswith("ptxas"):
                        st = os.stat(os.path.join(dirpath, name))
                        entries.append(f"{os.path.relpath(os.path.join(dirpath, name), root)}:{st.st_size}:{st.st_mtime_ns}")
        _build_id = hashlib.sha256("\n".join(entries).encode()).hexdigest()
    return _build_id


def worker_source_id():
    global _worker_id
    if _worker_id is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the worker package
        digest = hashlib.sha256()
        for folder, folders, names in os.walk(root):
            folders[:] = sorted(f for f in folders if f != "__pycache__")
            for name in sorted(n for n in names if n.endswith(".py")):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    digest.update(os.path.relpath(path, root).encode() + b"\0" + f.read())
        _worker_id = digest.hexdigest()
    return _worker_id


class UnstableKey(Exception):
    """A value the key would cover renders differently in every process."""


# A memory address in a rendering (`<function f at 0x7f...>`): different in every process.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _stable_rendering(value, rendered):
    """`rendered` (a constexpr's text) with a function's address replaced by what identifies the
    function across processes: its name, its compiled code, what its defaults and closure hold,
    and the text of the file that defines it (where its module-level helpers live)."""
    if not _ADDRESS.search(rendered):
        return rendered
    code = getattr(value, "__code__", None)
    if code is None:  # an object known by its address only: nothing stable to key it by
        raise UnstableKey(rendered)
    held = (value.__defaults__, value.__kwdefaults__,
            tuple(cell.cell_contents for cell in value.__closure__ or ()))
    held_text = repr(held)
    if _ADDRESS.search(held_text):
        raise UnstableKey(held_text)
    digest = hashlib.sha256(marshal.dumps(code) + held_text.encode())
    try:
        with open(code.co_filename, "rb") as defining_file:
            digest.update(defining_file.read())
    except OSError:
        raise UnstableKey(code.co_filename) from None
    return f"constexpr[{value.__module__}.{value.__qualname__}:{digest.hexdigest()}]"


@contextlib.contextmanager
def _stable_constexprs():
    """Triton's JITFunction.cache_key covers the constexpr globals a kernel uses by their repr;
    a plain function made a constexpr (`@tl.constexpr def f(dtype): ...`, as flag_gems' cumsum
    does) renders with its address, so the key changed from one process to the next and such a
    kernel was never served from the cache. While keys are computed, a constexpr renders
    stably; a value with no stable rendering makes the cell keyless (compiled every run)."""
    from triton.language import core
    original = core.constexpr.__repr__

    def stable(self):
        return _stable_rendering(self.value, original(self))

    core.constexpr.__repr__ = stable
    try:
        yield
    finally:
        core.constexpr.__repr__ = original


def cell_key(request, tool_version):
    """The cache key of one cell request, or raise if the kernel cannot even be loaded."""
    from triton._C.libtriton import get_cache_invalidating_env_vars
    from triton.compiler.compiler import make_backend
    fn = loader.load_kernel(request.kernel)
    src, options = build_source(fn, request)
    target = make_target(request.target)
    backend = make_backend(target)
    parsed = backend.parse_options(dict(options))
    material = {
        "tool": tool_version,
        "worker": worker_source_id(),
        "triton": triton_build_id(),
        "python": sys.version,
        "env": get_cache_invalidating_env_vars(),
        "source": src.hash(),
        "options": parsed.hash(),
        "backend": backend.hash(),
        "target": [target.backend, str(target.arch), target.warp_size],
        "inject": os.environ.get(channels.ENV_INJECT, ""),
        # The result holds the launch verdict against these (launch_rules.py); a repro request
        # has none.
        "launch_limits": as_json(getattr(request, "launch_limits", None)),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def keys_for(cells, tool_version):
    """{cell id: key or None}: a cell whose key cannot be computed is simply not cached."""
    out = {}
    with _stable_constexprs():
        for cell in cells:
            try:
                out[str(cell.id)] = cell_key(cell.request, tool_version)
            except Exception:  # import failures and bad rows are reported by the compile itself
                out[str(cell.id)] = None
    return out
