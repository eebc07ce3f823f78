"""What the installed Triton can do, read from Triton itself: backends, option fields, warp sizes,
the assemblers it bundles. Nothing here is a copied table."""
import dataclasses
import subprocess
import sys

from . import releases, target_support
from .loader import KernelImportError, load_kernel
from .stages import make_target


def _backend_modules():
    from triton.backends import backends
    return backends


def option_fields():
    out = {}
    for name, backend in _backend_modules().items():
        options_cls = _options_class(backend.compiler)
        if options_cls is not None:
            fields = dataclasses.fields(options_cls)
            # Keyed like targets ("cuda", "hip"), not like the plugin folders ("nvidia", "amd").
            target_backend = next((f.default for f in fields if f.name == "backend_name"), name)
            out[target_backend] = sorted(f.name for f in fields)
    return out


def _options_class(compiler_cls):
    namespace = _defining_namespace(compiler_cls)
    for attr in ("CUDAOptions", "HIPOptions"):
        if attr in namespace:
            return namespace[attr]
    return None


def _defining_namespace(cls):
    """The globals of the module that defines `cls`. Triton up to 3.1 loads its backends from
    files under an empty module name, so sys.modules does not have them: a function of the class
    still carries its module's globals."""
    module = sys.modules.get(cls.__module__)
    if module is not None:
        return vars(module)
    for member in vars(cls).values():
        if callable(member) and hasattr(member, "__globals__"):
            return member.__globals__
    return {}


def describe_target(spec):
    """Warp size and assembler of one target, as the installed backend decides them."""
    from triton.compiler.compiler import make_backend
    target = make_target(spec)
    info = {"name": f"{spec.backend}:{spec.arch}", "backend": spec.backend, "arch": spec.arch}
    # Checked before the backend is built: a backend accepts any arch it can parse (cuda:999),
    # and the user would learn only from a red cell per kernel.
    problem = target_support.problem(spec.backend, spec.arch)
    if problem:
        info["error"] = problem["message"]
        info["unsupported"] = problem
        return info
    try:
        backend = make_backend(target)
        options = backend.parse_options({})
        info["warp_size"] = getattr(options, "warp_size", target.warp_size)
    except Exception as e:  # an arch the backend refuses is reported, not fatal
        info["error"] = f"{type(e).__name__}: {e}"
        info["unsupported"] = {"reason": "refused", "message": info["error"],
                               "valid": target_support.known_archs(spec.backend)}
        return info
    path = target_support.ptxas_for(int(spec.arch)) if spec.backend == "cuda" else releases.current().hip_linker()
    if path:
        info["assembler"] = {"path": path, "version": _tool_version(path)}
    else:
        info["assembler"] = {"path": None, "version": "LLVM AMDGPU backend, in process (bundled with Triton)"}
    return info


def _tool_version(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable: {e}"
    lines = [line for line in out.splitlines() if line.strip()]
    release = next((line for line in lines if "release" in line), lines[-1] if lines else "")
    return release.split("release", 1)[-1].strip().rstrip(",") if "release" in release else release


def kernel_arguments(ref):
    """Argument names of a manifest row's function, or the result its cells have when it cannot be
    imported."""
    try:
        fn = load_kernel(ref)
    except KernelImportError as e:
        return {"ok": False, "failure": e.result()}
    constexprs = [p.name for p in fn.params if p.is_constexpr]
    return {"ok": True, "args": list(fn.arg_names), "constexprs": constexprs}
