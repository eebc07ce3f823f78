"""Every difference between the Triton releases the worker supports (3.0.0 on), in one place.

The rest of the worker speaks one form, Triton 3.7's: settings through `triton.knobs`, a kernel's
specialisation as 3.3 introduced it (the signature names every argument, constexprs included;
constants and attributes keyed by argument paths `(index, )`; attributes as
`[["tt.divisibility", 16]]` lists, an empty one for a constexpr). `current()` answers, for the installed Triton, how to do what
that form describes. One adapter per release family, each read from the family's own source:

- 3.7 on (`Knobs`): `triton.knobs`; 3.6 (`Knobs36`) gives a constexpr no attribute entry; 3.5
  (`Knobs35`) runs pass managers without a name, has one ptxas and the interpreter's old launch
  entry; 3.4 (`Knobs34`) has no profile_scratch and links AMD code objects with an ld.lld outside
  the wheel;
- 3.3 (`NoKnobs`): the same compile form, settings through environment variables and class
  attributes (`TRITON_ALWAYS_COMPILE`, `JITFunction.cache_hook`, `_path_to_binary`);
- 3.2 (`BackendAttrs`): `ASTSource(fn, signature, constants, attrs)` with the signature of the
  non-constexpr arguments and the constants keyed by name, and the backend's own
  `AttrsDescriptor` subclass (`tt.divisibility`, `tt.equal_to`, HIP's `tt.pointer_range`);
- 3.0 and 3.1 (`FixedAttrs`): the same, with one `AttrsDescriptor(divisible_by_16, equal_to_1)`
  of argument indices for every backend.

Older releases (2.x) are refused by the probe: their compiler has no backend plug-ins
(`triton.backends`), so no cross-target compile is possible at all.
"""
import os
import re
import sys

from . import portable
from ..base import protocol

OLDEST = (3, 0)


class UnsupportedRelease(Exception):
    """The installed Triton is older than OLDEST: the probe exits 3 with the fix."""


def version_tuple(text):
    """(major, minor) of a Triton version string ("3.2.0", "3.4.0+git1234", "3.5.0rc1")."""
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


class Knobs:
    """Triton 3.7 and later."""
    family = "3.7+"
    # The pointers every launcher of the release appends to a kernel's arguments, in order.
    scratch_params = ("global_scratch", "profile_scratch")

    def always_compile(self):
        """Compile even when Triton's own cache holds the kernel (our cache decides)."""
        from triton import knobs
        knobs.compilation.always_compile = True

    def nvidia_tool(self, name):
        """The path of one of the NVIDIA tools Triton bundles (ptxas, cuobjdump, nvdisasm, ...);
        raises when this install lacks it."""
        from triton import knobs
        return getattr(knobs.nvidia, name).path

    def nvidia_tool_names(self):
        return ("ptxas", "ptxas_blackwell", "cuobjdump", "nvdisasm")

    # The dialect prefix of TritonGPU's module attributes ("ttg.num-warps"), which the target
    # probe writes (target_support._run_lowering).
    ttgir_prefix = "ttg"

    def run_passes(self, manager, module):
        manager.run(module, "portcheck-target-probe")  # the name labels its diagnostics

    def hip_linker(self):
        """The ld.lld that links AMD code objects, or None where Triton links them in process."""
        return None

    def prepare(self):
        """Settings every process of the worker applies before it compiles."""

    def jit_cache_hook(self):
        from triton import knobs
        return knobs.runtime.jit_cache_hook

    def set_jit_cache_hook(self, hook):
        from triton import knobs
        knobs.runtime.jit_cache_hook = hook

    def ast_source(self, fn, signature, constexprs, attrs, target):
        """The ASTSource of a specialisation in the common form, compiled for `target`."""
        return portable.ast_source_37(fn, signature, constexprs, attrs)

    def specialisation(self, fn, data):
        """A serialised specialisation (the JIT's `specialization_data`) in the common form."""
        return data

    def fp8_dtypes(self, options, backend):
        """The fp8 dtypes the frontend accepts for a target, from its parsed options: the
        backend lists them (3.2 on: supported_fp8_dtypes)."""
        return sorted(getattr(options, "supported_fp8_dtypes", ()))

    def unify_interpreter(self, cls):
        """Gives the interpreter's InterpretedFunction the launch entry point 3.6 has: a
        class-level `run(*args, grid, warmup, **kwargs)` that `kernel[grid](...)` goes through."""

    # Options an autotune Config passes on every launch whatever the user wrote, with the value
    # that changes nothing: a captured row leaves them out at that value (launch_records.py).
    config_only_options = {}

    def ptxas_for(self, capability):
        """The path of the ptxas Triton assembles `capability` with (one per capability)."""
        from triton.backends.nvidia import compiler
        return compiler.get_ptxas(capability).path

    def sm_name(self, capability):
        """The --gpu-name Triton gives ptxas for `capability` ("sm_90a")."""
        from triton.backends.nvidia import compiler
        return compiler.sm_arch_from_capability(capability)

    def target_triple(self):
        """LLVM's answer for an AMD processor name, where this Triton exposes it (3.7 on)."""
        from triton._C.libtriton import amd
        return getattr(amd, "get_target_triple", None)


def _unify_interpreter_before_36(cls):
    """Up to 3.5 `run` is a closure each instance sets in __init__, and kernel[grid](...)
    bypasses it (__getitem__ builds the GridExecutor itself). The closure is kept under another
    name and reached through a class-level run, which __getitem__ now calls too."""
    if getattr(cls, "_portcheck_unified", False):
        return
    original_init = cls.__init__

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._portcheck_launch = self.__dict__.pop("run")

    def run(self, *args, grid, warmup=False, **kwargs):
        return self._portcheck_launch(*args, grid=grid, warmup=warmup, **kwargs)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    cls.__init__, cls.run, cls.__getitem__ = __init__, run, __getitem__
    cls._portcheck_unified = True


class Knobs36(Knobs):
    """Triton 3.6: no attribute entry for a constexpr."""
    family = "3.6"

    def ast_source(self, fn, signature, constexprs, attrs, target):
        """Before 3.7 the JIT gives a constexpr no attribute entry (3.7 on: an empty one)."""
        return portable.ast_source_33(fn, signature, constexprs, attrs)


class Knobs35(Knobs36):
    """Triton 3.5: a pass manager runs without a name for its diagnostics, one ptxas for every
    capability, the interpreter's old launch entry points."""
    family = "3.5"

    def run_passes(self, manager, module):
        manager.run(module)

    def ptxas_for(self, capability):
        from triton.backends.nvidia import compiler
        return compiler.get_ptxas().path

    def unify_interpreter(self, cls):
        _unify_interpreter_before_36(cls)


class Knobs34(Knobs35):
    """Triton 3.4: no profile_scratch (its drivers append global_scratch alone), AMD code
    objects linked outside the wheel."""
    family = "3.4"
    scratch_params = ("global_scratch", )

    def hip_linker(self):
        """Up to 3.4 the AMD backend runs an ld.lld of its own choice (TRITON_HIP_LLD_PATH, one
        bundled in torch's builds, ROCm's, /usr/bin/ld.lld), and raises when there is none."""
        from triton.backends import backends
        try:
            return str(backends["amd"].compiler.path_to_rocm_lld())
        except Exception:  # no linker at all: the hsaco stage says so in each HIP cell
            return None

    def prepare(self):
        if not _PREPARED:  # once per process: forked cells inherit what it set
            _PREPARED.append(True)
            portable.choose_hip_linker()


class NoKnobs(Knobs34):
    """Triton 3.3: the 3.4 compile form, no `triton.knobs`."""
    family = "3.3"

    def always_compile(self):
        os.environ["TRITON_ALWAYS_COMPILE"] = "1"

    # Triton 3.2 and 3.3's Config passes its warp-specialisation fields, 0 unless asked for.
    config_only_options = {"num_buffers_warp_spec": 0, "num_consumer_groups": 0, "reg_dec_producer": 0,
                           "reg_inc_consumer": 0}

    def nvidia_tool(self, name):
        """`_path_to_binary` runs the tool's --version on every call (3.4 on remember it) and
        raises when the wheel lacks it (ptxas-blackwell came with 3.3): asked once per process,
        as the warm-up does before the cells fork."""
        return _bundled_nvidia_tool(name.replace("_", "-"))

    def ptxas_for(self, capability):
        from triton.backends.nvidia import compiler
        return compiler.get_ptxas(capability)[0]

    def jit_cache_hook(self):
        from triton.runtime.jit import JITFunction
        return JITFunction.cache_hook

    def set_jit_cache_hook(self, hook):
        from triton.runtime.jit import JITFunction
        JITFunction.cache_hook = hook


class BackendAttrs(NoKnobs):
    """Triton 3.2: name-keyed signature and constants, the backend's AttrsDescriptor."""
    family = "3.2"
    ttgir_prefix = "triton_gpu"
    scratch_params = ()  # global_scratch came with 3.3

    def ptxas_for(self, capability):
        return self.nvidia_tool("ptxas")  # one ptxas, no ptxas-blackwell

    def sm_name(self, capability):
        # The backend's own spelling (make_ptx, make_cubin): only Hopper gets the "a" suffix.
        return "sm_90a" if capability == 90 else f"sm_{capability}"

    def ast_source(self, fn, signature, constexprs, attrs, target):
        """As the JIT of these releases builds it (portable.ast_source_30), with the backend's
        own AttrsDescriptor."""
        return portable.ast_source_30(fn, signature, constexprs, attrs, target, backend_attrs=True)

    def specialisation(self, fn, data):
        attrs = data.get("attrs") or {}
        properties = attrs.get("arg_properties", {})
        divisible = set(properties.get("tt.divisibility", attrs.get("divisible_by_16", [])))
        equal_to_1 = set(properties.get("tt.equal_to", attrs.get("equal_to_1", [])))
        return _common_form(fn, data, divisible, equal_to_1)


class FixedAttrs(BackendAttrs):
    """Triton 3.0 and 3.1: one AttrsDescriptor of indices for every backend."""
    family = "3.0-3.1"

    def ast_source(self, fn, signature, constexprs, attrs, target):
        return portable.ast_source_30(fn, signature, constexprs, attrs, target, backend_attrs=False)

    def fp8_dtypes(self, options, backend):
        """No list yet: what the source states. fp8e4nv needs `options.allow_fp8e4nv` (a cast
        asserts it: "not supported on CUDA arch < 89"; set from capability 8.9, never for AMD),
        fp8e4b15 needs the backend's custom conversion (`convert_custom_types`: CUDA's only). The
        rest is listed: which of fp8e4b8 and fp8e5b16 a CUDA target takes is nowhere stated
        (tried: 3.0 compiles fp8e4b8 for cuda:90, not for cuda:80), so those cells tell."""
        import triton.language as tl
        fp8 = {t for t in tl.dtype.FP_TYPES if t.startswith("fp8")}
        if not getattr(options, "allow_fp8e4nv", False):
            fp8.discard("fp8e4nv")
        if "convert_custom_types" not in backend.get_codegen_implementation():
            fp8.discard("fp8e4b15")
        return sorted(fp8)


# Newest first: the first family whose oldest release the installed one reaches.
FAMILIES = (((3, 7), Knobs), ((3, 6), Knobs36), ((3, 5), Knobs35), ((3, 4), Knobs34), ((3, 3), NoKnobs), ((3, 2), BackendAttrs), (OLDEST, FixedAttrs))


def for_version(text):
    version = version_tuple(text)
    for oldest, family in FAMILIES:
        if version >= oldest:
            return family()
    raise UnsupportedRelease(
        f"Triton {text} is older than 3.0.0, the oldest release triton-portcheck compiles with "
        "(2.x has no backend plug-ins, so it cannot compile for a GPU it does not run on); "
        "use Triton 3.0.0 or later")


_CURRENT = []
_PREPARED = []


def current():
    """The adapter of the Triton this process imports. It changes nothing: the worker's own
    processes call `prepare()` before they compile; a captured program is left as it is."""
    if not _CURRENT:
        import triton
        _CURRENT.append(for_version(triton.__version__))
    return _CURRENT[0]


_NVIDIA_TOOLS = {}


def _bundled_nvidia_tool(binary):
    """`_path_to_binary(binary)[0]`, once per process."""
    if binary not in _NVIDIA_TOOLS:
        from triton.backends.nvidia import compiler
        _NVIDIA_TOOLS[binary] = compiler._path_to_binary(binary)[0]
    return _NVIDIA_TOOLS[binary]












def jit_specialises(fn, index, ty):
    """Whether Triton's JIT gives this argument an attribute entry (an empty one when it is not
    divisible by 16): integers and pointers it specialises, never floats, bools or tuples. The
    entries are part of the compile key, so leaving the empty ones out compiled the same code
    under another key than the JIT's."""
    if portable.do_not_specialize(fn, index):
        return False
    return ty.startswith("*") or re.fullmatch(r"[iu](8|16|32|64)", ty) is not None




def _common_form(fn, data, divisible, equal_to_1):
    """A 3.0-3.2 specialisation (signature of the non-constexpr arguments, constants by name,
    attributes as index sets) in the common form, where a folded None or 1 is a constexpr."""
    signature, constants = data.get("signature") or {}, data.get("constants") or {}
    out = {"name": data.get("name"), "signature": {}, "constant_keys": [], "constant_vals": [],
           "attrs_keys": [], "attrs_vals": [], "options": data.get("options") or {}, "key": data.get("key")}
    for index, name in enumerate(fn.arg_names):
        ty = signature.get(name)
        if name in constants and (ty is None or constants[name] is None or index in equal_to_1):
            out["signature"][name] = "constexpr"
            out["constant_keys"].append([index])
            out["constant_vals"].append(constants[name])
            out["attrs_keys"].append([index])
            out["attrs_vals"].append([])
            continue
        out["signature"][name] = ty
        if jit_specialises(fn, index, ty):
            out["attrs_keys"].append([index])
            out["attrs_vals"].append([["tt.divisibility", 16]] if index in divisible else [])
    return out


def import_triton():
    """Triton, or exit 3 with one line (the tool reads it as an environment to fix): every
    process that needs Triton imports it through here first."""
    try:
        import triton
    except Exception as e:  # ImportError, or a broken install raising anything
        sys.stderr.write(f"portcheck-worker: cannot import triton: {type(e).__name__}: {e}\n")
        sys.exit(protocol.EXIT_ENVIRONMENT)
    return triton
