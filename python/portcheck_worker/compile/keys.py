"""Result-cache keys: everything that decides a cell's outcome, hashed.

The key covers the kernel's source and that of every JIT function and constexpr global it uses
(Triton's own JITFunction.cache_key, through ASTSource.hash, with the signature, constants and
attributes), the parsed options, the target and the backend's own hash (ptxas version, AMD codegen
revision), the Triton build, the Python version, the environment variables Triton reads for
compilation, and our own version and worker source.
"""
import hashlib
import json
import os
import sys

from . import loader
from .stages import build_source, make_target

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


def cell_key(request, tool_version):
    """The cache key of one cell request, or raise if the kernel cannot even be loaded."""
    from triton._C.libtriton import get_cache_invalidating_env_vars
    from triton.compiler.compiler import make_backend
    fn = loader.load_kernel(request["kernel"])
    src, options = build_source(fn, request)
    target = make_target(request["target"])
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
        "inject": os.environ.get("TRITON_PORTCHECK_INJECT", ""),
        # The result holds the launch verdict against these (launch_rules.py).
        "launch_limits": request.get("launch_limits"),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def keys_for(cells, tool_version):
    """{cell id: key or None}: a cell whose key cannot be computed is simply not cached."""
    out = {}
    for cell in cells:
        try:
            out[str(cell["id"])] = cell_key(cell["request"], tool_version)
        except Exception:  # import failures and bad rows are reported by the compile itself
            out[str(cell["id"])] = None
    return out
