"""Compiles one cell through Triton's own pipeline for an explicit target, stage by stage.

The frontend (AST to TTIR) runs inside `triton.compile` before the first backend stage; every
backend stage (ttir, ttgir, llir, ptx/amdgcn, cubin/hsaco) is wrapped where the backend lists
them (StageRecorder.timing), so we time each one and know which one raised.
"""
import re
import subprocess
import tempfile
import time
import traceback
import warnings

from . import autotune_rules, cubin, driver, loader, portable, releases, shared_backend
from .launch_rules import launch_check
from .outputs import IR_STAGES, OutputError, export_files, save_ir, save_partial_ir
from ..base import faults
from ..base.frozen_json import as_json

# Options whose values the backend derives from the target; a specialisation serialised for one
# target carries them, and they must not leak into a compile for another.
TARGET_DERIVED_OPTIONS = {
    "arch", "supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes", "extern_libs",
    "max_num_imprecise_acc_default", "backend_name", "warp_size", "ptx_version",
    "allowed_dot_input_precisions", "default_dot_input_precision", "matrix_instr_nonkdim",
    "min_shared_mem",
}
METADATA_FIELDS = ("name", "hash", "num_warps", "num_ctas", "num_stages", "shared", "tmem_size",
                   "global_scratch_size", "global_scratch_align", "profile_scratch_size",
                   "profile_scratch_align", "cluster_dims", "maxnreg", "warp_size")
LOG_LIMIT = 8000


class StageError(Exception):
    """A compiler failure, with the stage that raised and the times of the stages before it."""

    def __init__(self, stage, cause, times, source, compile_s):
        super().__init__(str(cause))
        self.stage = stage
        self.cause = cause
        self.times = times
        self.source = source
        self.compile_s = compile_s
        self.kernel_source = None
        self.saved_ir = None  # with save_ir_dir: the stages finished before the failure
        self.ttir_key = None  # where the frontend finished (shared_backend.key)


def make_target(spec):
    """The GPUTarget of a protocol Target."""
    from triton.backends.compiler import GPUTarget
    arch = int(spec.arch) if spec.backend == "cuda" else spec.arch
    return GPUTarget(spec.backend, arch, int(spec.warp_size))


def decode_constant(value):
    """The decoding Triton's JITFunction.preload applies to serialised constexpr values."""
    import triton.language as tl
    if isinstance(value, str) and tl.dtype.is_dtype(value):
        return tl.dtype(value)
    if isinstance(value, dict):
        if value == {"none": True}:  # the manifest's spelling of a None argument
            return None
        if "constexpr" in value:
            return tl.constexpr(_tuplify(value["constexpr"]))
        if "jit_function" in value:
            return _jit_function(value["jit_function"])
    return _tuplify(value)


def _jit_function(key):
    """The @triton.jit function a serialised constant names ("module:qualname"): importing its
    module registers it. Whatever else it names is the row's mistake, reported as its import
    error, never ours."""
    # Only Triton releases that serialise JIT-function constants have this registry.
    from triton.runtime.jit import _triton_jit_function_registry
    if not isinstance(key, str) or ":" not in key:
        raise loader.KernelImportError(
            f"constant {{jit_function = {key!r}}}: expected \"module:function\" naming a @triton.jit function", "")
    if key not in _triton_jit_function_registry:
        module = key.split(":", 1)[0]
        try:
            __import__(module)
        except BaseException as e:  # the user's module, SystemExit included
            raise loader.KernelImportError(
                f"constant {{jit_function = {key!r}}}: importing {module} failed: {type(e).__name__}: {e}",
                loader.bounded_traceback()) from None
    if key not in _triton_jit_function_registry:
        raise loader.KernelImportError(
            f"constant {{jit_function = {key!r}}}: {key} is not a @triton.jit function "
            "(expected \"module:function\" naming one)", "")
    return _triton_jit_function_registry[key]


class UserExit(Exception):
    """sys.exit() (SystemExit) raised by the kernel's code or a hook while Triton compiled it."""


def _tuplify(value):
    return tuple(_tuplify(v) for v in value) if isinstance(value, list) else value


class Specialisation:
    """One cell's specialisation in the common form (releases.py): what build_source compiles
    and what an export lists as the binary's parameters."""

    def __init__(self, signature, constexprs, attrs, options):
        self.signature, self.constexprs, self.attrs, self.options = signature, constexprs, attrs, options


def specialisation(fn, request):
    """From either a manifest row or a serialised specialisation (a compile or repro request)."""
    spec = request.specialization
    if spec:
        signature = {k: _tuplify(v) for k, v in spec["signature"].items()}
        constexprs = {tuple(k): decode_constant(v) for k, v in zip(spec["constant_keys"], spec["constant_vals"])}
        attrs = {tuple(k): v for k, v in zip(spec["attrs_keys"], spec["attrs_vals"])}
        options = {k: _tuplify(v) for k, v in spec.get("options", {}).items() if k not in TARGET_DERIVED_OPTIONS}
        options.update(request.options or {})
        return Specialisation(signature, constexprs, attrs, options)

    types = request.signature or {}
    constants = request.constants or {}
    signature, constexprs, attrs = {}, {}, {}
    for index, name in enumerate(fn.arg_names):
        if name in constants:
            signature[name] = "constexpr"
            constexprs[(index, )] = decode_constant(constants[name])
            attrs[(index, )] = []  # as the JIT: a constexpr's specialisation is "" too
        else:
            ty = types[name]
            divisible = ty.endswith(":16")
            ty = ty[:-3] if divisible else ty
            if releases.jit_specialises(fn, index, ty):
                attrs[(index, )] = [["tt.divisibility", 16]] if divisible else []
            signature[name] = ty
    return Specialisation(signature, constexprs, attrs, dict(request.options or {}))


def build_source(fn, request, spec=None):
    """An ASTSource and options, as the installed release takes them."""
    spec = spec or specialisation(fn, request)
    target = make_target(request.target)
    return releases.current().ast_source(fn, spec.signature, spec.constexprs, spec.attrs, target), spec.options


class StageRecorder:
    """Times each stage, writes progress marks, and remembers which stage raised."""

    def __init__(self, progress, kernel_name, keep_ir=False, may_share=True):
        self.progress = progress
        self.kernel_name = kernel_name
        self.keep_ir = keep_ir
        self.may_share = may_share  # another cell's backend work may stand for this one's
        self.ir = {}  # stage -> text, with keep_ir: what a failing compile still produced
        self.times = {}
        self.current = "frontend"
        self.ttir_key = None  # the frontend's output, hashed at the first backend stage
        self._frontend_start = None

    def start_frontend(self):
        self.progress.mark("frontend")
        faults.maybe_inject("frontend", self.kernel_name)
        self._frontend_start = time.perf_counter()

    def finish_frontend(self):
        """The frontend ends where the first backend stage starts, or where it raised."""
        if self._frontend_start is not None and "frontend" not in self.times:
            self.times["frontend"] = time.perf_counter() - self._frontend_start

    def timing(self, target):
        """Wraps the stages of every compile for `target` meanwhile."""
        return portable.stages_wrapped(target, self._wrap)

    def _wrap(self, name, run):

        def timed(src, metadata):
            self.finish_frontend()
            self.current = name
            self.progress.mark(name)
            if self.ttir_key is None:  # the first backend stage: `src` is the frontend's module
                self.ttir_key = shared_backend.key(src, metadata)
                found = shared_backend.lookup(self.ttir_key) if self.may_share else None
                if found is not None:
                    raise shared_backend.Shared(found, metadata.get("hash"))
            faults.maybe_inject(name, self.kernel_name)
            start = time.perf_counter()
            try:
                out = run(src, metadata)
            finally:
                self.times[name] = time.perf_counter() - start
            # As text now: the next stage's passes change an MLIR module in place.
            if self.keep_ir and name in IR_STAGES:
                self.ir[name] = out if isinstance(out, str) else str(out)
            return out

        return timed


def import_for(request, progress=None):
    """A cell's setup up to its kernel: the release prepared, the stand-in driver of its target
    installed (module-level target_info guards see it), the kernel's module imported. Returns
    (target, kernel); raises loader.KernelImportError for the user's import failures."""
    warnings.filterwarnings("ignore", message=".*TRITON_DEFAULT_FP_FUSION.*")
    releases.current().prepare()
    target = make_target(request.target)
    driver.install(target)
    if progress is not None:
        progress.mark("import")
    return target, loader.load_kernel(request.kernel)


def compile_cell(request, progress):
    """Returns the result dict; raises loader.KernelImportError for the user's import failures."""
    import triton

    target, fn = import_for(request, progress)
    kernel_name = request.row_name
    try:
        spec = specialisation(fn, request)
        src, options = build_source(fn, request, spec)
    except loader.KernelImportError:
        raise
    except Exception as e:  # a row whose values do not fit the kernel: Triton's frontend refuses
        raise StageError("frontend", e, {}, _error_location(fn, e), 0.0) from e

    # A cell that writes its IR or binary needs its own backend run.
    writes = bool(request.save_ir_dir or request.export_dir)
    recorder = StageRecorder(progress, kernel_name, keep_ir=bool(request.save_ir_dir),
                             may_share=not writes)
    releases.current().always_compile()
    started = time.perf_counter()
    recorder.start_frontend()
    try:
        with recorder.timing(target):
            compiled = triton.compile(src, target=target, options=options)
    except shared_backend.Shared as shared:
        recorder.finish_frontend()
        return shared_backend.result_of(shared, recorder.times, time.perf_counter() - started,
                                        source_location(fn))
    except BaseException as e:  # every failure of the compile, whatever its class, is reported
        # SystemExit (or any BaseException) from the kernel's code or a hook is its cell's
        # failure; left to escape, it ended the worker and read as a bug of ours.
        if isinstance(e, SystemExit):
            e = UserExit(f"exit({e.code!r}) was called while Triton compiled the kernel "
                         "(by the kernel's code or a hook; sys.exit raises SystemExit)")
        recorder.finish_frontend()
        error = StageError(recorder.current, e, recorder.times, _error_location(fn, e),
                           time.perf_counter() - started)
        error.kernel_source = source_location(fn)
        error.ttir_key = recorder.ttir_key
        if recorder.ttir_key is not None and recorder.may_share:  # a backend stage's failure
            shared_backend.remember(recorder.ttir_key, kernel_name, failure_result(error))
        if recorder.ir:
            try:
                error.saved_ir = save_partial_ir(recorder.ir, fn.__name__, request.save_ir_dir)
            except OutputError:
                pass  # the failure is the verdict; its IR is a courtesy
        raise error from e
    compile_s = time.perf_counter() - started

    progress.mark("inspect")
    result = _success(compiled, spec, fn, request, target, recorder.times, compile_s)
    result["ttir_key"] = recorder.ttir_key
    if recorder.may_share:
        shared_backend.remember(recorder.ttir_key, kernel_name, result)
    return result


def _success(compiled, spec, fn, request, target, times, compile_s):
    """A compiled kernel's result: its metadata and resources, and the files asked for."""
    result = {
        "status": "ok",
        "compile_s": compile_s,
        "stages": times,
        "metadata": _metadata(compiled),
        "sizes": {ext: len(text) for ext, text in compiled.asm.items() if ext != "source"},
        "source": source_location(fn),
        "resources": _resources(compiled, target),
    }
    # The rules every reproducer carries (launch_rules.py) read the limits as the JSON has them.
    limits = as_json(request.launch_limits)
    if limits:  # the tool knows the target's: the verdict is made here
        registers = result["resources"].get("registers")
        launch = launch_check(result["metadata"], registers if isinstance(registers, int) else None,
                              limits, f"{target.backend}:{target.arch}", target.warp_size)
        if launch["problems"]:  # what the release's autotuner does with a config that needs this
            launch["autotuner"] = autotune_rules.launch_answer(launch["exceeded"])
        result["launch"] = launch
    try:
        if request.save_ir_dir:
            result["saved_ir"] = save_ir(compiled, request.save_ir_dir)
        if request.export_dir:
            result["export"] = export_files(compiled, spec, fn, request.export_dir,
                                            releases.current().scratch_params)
    except OutputError as e:
        # The compile itself succeeded: the cell keeps its verdict, and the tool says once, after
        # the matrix, that the folder could not take the files (a full disk, no permission): exit 3.
        result["output_error"] = {"path": e.path, "error": e.error}
    return result


def failure_result(error):
    cause = error.cause
    return {
        "status": "error",
        "stage": error.stage,
        "error": {
            "type": f"{type(cause).__module__}.{type(cause).__name__}",
            "message": _bounded(portable.error_message(cause)),
            "traceback": _bounded("".join(traceback.format_exception(type(cause), cause, cause.__traceback__))),
        },
        "stages": error.times,
        "compile_s": error.compile_s,
        "error_source": error.source,
        "source": error.kernel_source,
        "ttir_key": error.ttir_key,
        # Whether the release's autotuner catches this and goes on with another config.
        "autotuner": autotune_rules.failure_answer(cause),
        **({"saved_ir": error.saved_ir} if error.saved_ir else {}),
    }


def _error_location(fn, error):
    """The file line a frontend CompilationError points at ('at 6:29:' counts from the def)."""
    node = getattr(error, "node", None)
    if getattr(error, "src", None) != getattr(fn, "src", object()) or not hasattr(node, "lineno"):
        return None
    where = source_location(fn)
    if where is None:
        return None
    return {"file": where["file"], "line": where["line"] + node.lineno - 1}


def _bounded(text, limit=LOG_LIMIT):
    return text if len(text) <= limit else text[:limit // 2] + "\n[...]\n" + text[-limit // 2:]


def _metadata(compiled):
    md = compiled.metadata._asdict()
    out = {k: md[k] for k in METADATA_FIELDS if k in md}
    out["target"] = vars(md["target"]) if "target" in md else None
    out["triton_version"] = md.get("triton_version")
    return out


def source_location(fn):
    """The kernel's file and `def` line. From its code object and the file's lines, not
    inspect.getsourcelines, which tokenizes the whole function: 0.4 ms of every cell."""
    import linecache
    code = getattr(fn.fn, "__code__", None)
    if code is None or not linecache.getlines(code.co_filename):
        return None
    lines = linecache.getlines(code.co_filename)
    line = code.co_firstlineno  # the first decorator's line, for a decorated function
    for offset, text in enumerate(lines[line - 1:line + 31]):
        if text.lstrip().startswith(("def ", "async def ")):
            return {"file": code.co_filename, "line": line + offset}
    return {"file": code.co_filename, "line": line}


def _resources(compiled, target):
    """Registers and spills: the cubin's ELF tables (NVIDIA; cuobjdump where they cannot be
    read), the kernel descriptor (AMD)."""
    try:
        if target.backend == "cuda":
            try:
                return cubin.resources(compiled.asm["cubin"], compiled.metadata.name)
            except cubin.Unreadable:
                return _cuda_resources(compiled.asm["cubin"])
        return _amd_resources(compiled.asm.get("amdgcn", ""))
    except Exception as e:  # resource counts are extra information; never fail a cell on them
        return {"error": f"{type(e).__name__}: {e}"}


def _cuda_resources(cubin):
    tool = releases.current().nvidia_tool("cuobjdump")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    fields = dict(re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", out))
    return {"registers": int(fields.get("REG", 0)), "stack_bytes": int(fields.get("STACK", 0)),
            "local_bytes": int(fields.get("LOCAL", 0)), "static_shared_bytes": int(fields.get("SHARED", 0))}


def _amd_resources(amdgcn):

    def first(pattern):
        m = re.search(pattern, amdgcn)
        return int(m.group(1)) if m else None

    return {"vgprs": first(r"\.vgpr_count:\s+(\d+)"), "sgprs": first(r"\.sgpr_count:\s+(\d+)"),
            "vgpr_spills": first(r"\.vgpr_spill_count:\s+(\d+)"),
            "sgpr_spills": first(r"\.sgpr_spill_count:\s+(\d+)"), "lds_bytes": first(r"\.group_segment_fixed_size:\s+(\d+)"),
            "scratch_bytes": first(r"\.private_segment_fixed_size:\s+(\d+)")}
