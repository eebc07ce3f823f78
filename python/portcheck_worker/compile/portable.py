"""Compiling a specialisation for a target without a GPU, with nothing but Triton (3.0 on).

This module imports nothing of the worker: a reproducer (`triton-portcheck repro`) carries its
text, below the kernel, so the file runs wherever Triton is installed, under any release from
3.0. The worker compiles through the same functions (releases.py, stages.py), so what a
reproducer does is what the cell did.
"""
import contextlib
import os
import re
import shutil


def triton_version():
    """(major, minor) of the installed Triton ("3.2.0", "3.4.0+git1234", "3.5.0rc1")."""
    import triton
    m = re.match(r"(\d+)\.(\d+)", triton.__version__)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def gpu_target(backend, arch, warp_size):
    from triton.backends.compiler import GPUTarget
    return GPUTarget(backend, int(arch) if backend == "cuda" else arch, int(warp_size))


class StandInDriver:
    """What compiling asks of a GPU driver (target_info's is_cuda()/is_hip() guards ask it),
    answered for the target; anything that needs a device raises."""

    def __init__(self, target):
        self.target = target

    @classmethod
    def is_active(cls):
        return True

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_capability(self, device=None):
        return divmod(int(self.target.arch), 10) if self.target.backend == "cuda" else (0, 0)

    def get_benchmarker(self):  # asked by @triton.autotune at import, before Triton 3.4

        def refuse(*args, **kwargs):
            raise RuntimeError("benchmarking needs a GPU")

        return refuse

    def __getattr__(self, name):
        raise AttributeError(f"no GPU here: the driver was asked for {name!r}")


# ---- the ASTSource each release's JIT builds for a specialisation in the 3.7 form: a signature
# naming every argument (constexprs too), constants and attributes keyed by argument paths.


def ast_source(fn, signature, constexprs, attrs, target):
    """The installed release's form of the specialisation."""
    version = triton_version()
    if version >= (3, 7):
        return ast_source_37(fn, signature, constexprs, attrs)
    if version >= (3, 3):
        return ast_source_33(fn, signature, constexprs, attrs)
    return ast_source_30(fn, signature, constexprs, attrs, target, backend_attrs=version >= (3, 2))


def ast_source_37(fn, signature, constexprs, attrs):
    from triton.compiler import ASTSource
    return ASTSource(fn, signature, constexprs, attrs)


def ast_source_33(fn, signature, constexprs, attrs):
    """3.3 to 3.6: the same, but a constexpr has no attribute entry (3.7 on: an empty one)."""
    attrs = {k: v for k, v in attrs.items() if v or k not in constexprs}
    return ast_source_37(fn, signature, constexprs, attrs)


def ast_source_30(fn, signature, constexprs, attrs, target, backend_attrs):
    """3.0 to 3.2: the signature of every argument that is not a declared constexpr (a None as a
    null *i8, an integer 1 as i32), the constants by name (the folded 1s and Nones too), the
    attributes judged on every argument's value, constexprs included: divisible by 16 (a None
    too, and False, an int 0) and equal to 1. 3.2 takes the backend's own AttrsDescriptor
    (`backend_attrs`), 3.0 and 3.1 one of argument indices for every backend."""
    from triton.compiler import ASTSource
    names = fn.arg_names
    constants = {names[argument_index(k)]: v for k, v in constexprs.items()}
    divisible = {argument_index(k) for k, v in attrs.items() if ["tt.divisibility", 16] in _pairs(v)}
    old_signature, equal_to_1 = {}, set()
    for index, name in enumerate(names):
        ty = signature.get(name, "constexpr")
        if name in constants and not do_not_specialize(fn, index):
            value = constants[name]
            if value is None or (isinstance(value, int) and value % 16 == 0):
                divisible.add(index)
            if type(value) is int and value == 1:
                equal_to_1.add(index)
        if ty == "constexpr" and name in constants and not declared_constexpr(fn, name):
            ty = "*i8" if constants[name] is None else "i32" if index in equal_to_1 else ty
        if ty != "constexpr":
            old_signature[name] = ty
    make = _backend_attrs if backend_attrs else _fixed_attrs
    return ASTSource(fn, old_signature, constants, make(sorted(divisible), sorted(equal_to_1), target))


def _backend_attrs(divisible, equal_to_1, target):
    """3.2: the backend's descriptor as the JIT makes it (every property it knows listed, HIP's
    tt.pointer_range included), with the arguments of each property set as from_dict does."""
    from triton.compiler.compiler import make_backend
    descriptor = make_backend(target).get_attrs_descriptor([], [])
    descriptor.arg_properties["tt.divisibility"] = list(divisible)
    descriptor.arg_properties["tt.equal_to"] = list(equal_to_1)
    descriptor._init_slots()
    return descriptor


def _fixed_attrs(divisible, equal_to_1, target):
    from triton.compiler.compiler import AttrsDescriptor
    return AttrsDescriptor(divisible_by_16=set(divisible), equal_to_1=set(equal_to_1))


class TupleBeforeThreeThree(ValueError):
    """A specialisation this release's compiler cannot express (a tuple argument before 3.3)."""


def argument_index(key):
    if len(key) != 1:
        raise TupleBeforeThreeThree(f"argument path {list(key)}: tuple arguments need Triton 3.3 or later")
    return key[0]


def _pairs(value):
    return [list(a) for a in value if isinstance(a, (list, tuple))]


def do_not_specialize(fn, index):
    params = getattr(fn, "params", [])
    return index < len(params) and getattr(params[index], "do_not_specialize", False)


def declared_constexpr(fn, name):
    params = getattr(fn, "params", [])
    return any(p.name == name and p.is_constexpr for p in params)


# ---- settings every compile without a GPU needs


def choose_hip_linker():
    """Up to 3.4 the AMD backend links with an ld.lld outside the wheel, and without ROCm picks
    the distribution's default (LLVM 14 on Debian 12), which cannot read code object v5. The
    newest versioned ld.lld on PATH links instead when it is newer; a TRITON_HIP_LLD_PATH the
    user set is theirs and kept."""
    if "TRITON_HIP_LLD_PATH" in os.environ or triton_version() >= (3, 5):
        return
    from triton.backends import backends
    try:
        chosen = str(backends["amd"].compiler.path_to_rocm_lld())
    except Exception:  # no linker at all: the hsaco stage says so
        chosen = None
    if chosen and not chosen.startswith("/usr/bin/"):
        return  # torch's bundled one or ROCm's: what Triton runs on a GPU machine
    newest = next(filter(None, (shutil.which(f"ld.lld-{major}") for major in range(40, 14, -1))), None)
    if newest and (chosen is None or _llvm_major(newest) > _llvm_major(chosen)):
        os.environ["TRITON_HIP_LLD_PATH"] = newest


def _llvm_major(path):
    """The LLVM major version of an LLVM tool, from its --version ("LLD 14.0.6"); 0 if unknown."""
    import subprocess
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    m = re.search(r"(\d+)\.\d+\.\d+", out)
    return int(m.group(1)) if m else 0


@contextlib.contextmanager
def stages_wrapped(target, wrap):
    """Meanwhile every backend stage (ttir, ttgir, llir, ptx, cubin, ...) of a compile for
    `target` runs as `wrap(name, run)` returns it, wrapped where the backend lists them
    (`add_stages`). Not through knobs.runtime.add_stages_inspection_hook: the backends of 3.4
    and 3.5 never call it."""
    from triton.backends import backends
    found = [b.compiler for b in backends.values() if b.compiler.supports_target(target)]
    if len(found) != 1:  # triton.compile itself reports this
        yield
        return
    backend_cls = found[0]
    own = "add_stages" in backend_cls.__dict__
    original = backend_cls.add_stages

    def add_stages(this, stages, *args, **kwargs):
        original(this, stages, *args, **kwargs)
        for name, run in list(stages.items()):
            stages[name] = wrap(name, run)

    backend_cls.add_stages = add_stages
    try:
        yield
    finally:
        if own:
            backend_cls.add_stages = original
        else:
            del backend_cls.add_stages


def error_message(error):
    """The exception's text; for a frontend error raised inside a called @triton.jit function,
    the text of what failed there too. Triton chains those: the outer CompilationError shows the
    call site and ends at its caret line ("^"), and the reason is in its __cause__."""
    text = str(error)
    seen = {id(error)}
    while text.rstrip().endswith("^") and error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
        inner = str(error)
        if not any(c.__name__ == "CompilationError" for c in type(error).__mro__):
            inner = f"{type(error).__name__}: {inner}"
        text = f"{text}\n{inner}"
    return text


def compile_recorded(kernel, cell, progress=None):
    """Compiles the recorded specialisation; returns (compiled, None, None) or (None, stage,
    exception). `progress(stage)` is told each stage as it starts."""
    import triton
    import warnings
    from triton.runtime import driver
    warnings.filterwarnings("ignore", message=".*TRITON_DEFAULT_FP_FUSION.*")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # a kernel in Triton's cache would not compile
    target = gpu_target(*cell["target"])
    driver.set_active(StandInDriver(target))
    if target.backend == "hip":
        choose_hip_linker()
    stage = ["frontend"]

    def wrap(name, run):

        def named(src, metadata):
            stage[0] = name
            if progress:
                progress(name)
            return run(src, metadata)

        return named

    if progress:
        progress("frontend")
    try:
        src = ast_source(kernel, cell["signature"], cell["constexprs"], cell["attrs"], target)
        with stages_wrapped(target, wrap):
            return triton.compile(src, target=target, options=dict(cell["options"])), None, None
    except Exception as e:  # every compiler failure, whatever its class, is the outcome
        return None, stage[0], e
