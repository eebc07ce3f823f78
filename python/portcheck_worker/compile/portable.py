"""Compiling a specialisation for a target without a GPU, with nothing but Triton (3.0 on).

This module imports nothing of the worker: a reproducer (`triton-portcheck repro`) carries its
text, below the kernel, so the file runs wherever Triton is installed, under any release from
3.0. The worker compiles through the same functions (releases.py, stages.py), so what a
reproducer does is what the cell did.
"""
import contextlib
import json
import os
import re
import shutil
import sys
import traceback


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


def launch_problems(metadata, limits):
    """What of the compiled metadata exceeds the target's launch limits (threads per block,
    shared memory, cluster size, tensor memory; registers are counted from the binary by
    triton-portcheck, not here)."""
    warps, warp_size = metadata.get("num_warps", 0), metadata.get("warp_size") or limits.get("warp_size", 32)
    cluster = 1
    for size in metadata.get("cluster_dims") or ():
        cluster *= size
    needs = {"threads per block": warps * warp_size, "bytes of shared memory": metadata.get("shared", 0),
             "CTAs in a cluster": cluster, "columns of tensor memory": metadata.get("tmem_size", 0)}
    allowed = {"threads per block": limits.get("max_threads_per_block"),
               "bytes of shared memory": limits.get("max_shared_bytes_per_block"),
               "CTAs in a cluster": limits.get("max_cluster_size"),
               "columns of tensor memory": limits.get("max_tensor_memory_columns")}
    return [f"needs {needs[what]} {what}; the target allows {allowed[what]}" for what in needs
            if allowed[what] is not None and (needs[what] or 0) > allowed[what]]


# ---- running the reproducer: `python FILE [--result PATH] [--progress PATH]`


class StderrCaptured:
    """File descriptor 2 into a temporary file meanwhile (MLIR prints its diagnostics there),
    shown again afterwards when `echo`."""

    def __init__(self, echo=False):
        self.echo, self.text = echo, ""

    def __enter__(self):
        import tempfile
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()
        if self.echo and self.text:
            sys.stderr.write(self.text)
            sys.stderr.flush()


def same_failure(recorded_message, text):
    """Whether every word of the recorded message is in `text` (numbers aside): the compiler
    says the same thing, whatever its release added around it."""
    def words(s):
        return set(re.findall(r"[A-Za-z_][A-Za-z_]+", s or ""))
    return words(recorded_message) <= words(text)


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


def _flags(argv):
    flags = {}
    for name, value in zip(argv[::2], argv[1::2]):
        if name not in ("--result", "--progress"):
            sys.exit(f"usage: python {os.path.basename(sys.argv[0])} [--result FILE] [--progress FILE]")
        flags[name[2:]] = value
    if len(argv) % 2:
        sys.exit(f"usage: python {os.path.basename(sys.argv[0])} [--result FILE] [--progress FILE]")
    return flags


def _progress_writer(path):
    """"stage NAME" lines, as the worker writes them: triton-portcheck reads which stage a
    compile that ran out of time was in."""
    if not path:
        return None

    def mark(stage):
        with open(path, "a") as f:
            f.write(f"stage {stage}\n")

    return mark


def within_time_limit(limit, where, run):
    """For a cell that ran out of time: `run(progress)` in a child process, stopped at the same
    limit (a compiler pass holds the interpreter, so nothing in this process could stop it), the
    stage it was in said, exit status 1: it reproduces."""
    import select
    import signal
    import time
    print(f"the cell ran out of time ({limit:g} s, triton-portcheck's limit): this run stops there too", flush=True)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        code = run(lambda stage: os.write(write_end, f"{stage}\n".encode()))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(write_end)
    deadline, stage, ended = time.monotonic() + limit, "frontend", False
    while not ended and time.monotonic() < deadline:
        if select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))[0]:
            data = os.read(read_end, 4096)
            ended = not data
            stage = data.decode().split()[-1] if data.split() else stage
    os.close(read_end)
    if not ended:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print(f"reproduces: {where} is still compiling, in stage {stage}, after {limit:g} s")
        return 1
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def reproduce(kernel, cell, recorded, argv):
    """Compiles, says what happened against what was recorded; 1 when the compile still fails
    (or still exceeds the launch limit), 0 when it no longer does."""
    import triton
    flags = _flags(argv)
    where = f"Triton {triton.__version__} for {cell['target'][0]}:{cell['target'][1]}"
    if recorded.get("time_limit_s") and not flags.get("result"):  # with --result, the tool times it
        return within_time_limit(recorded["time_limit_s"], where,
                                 lambda progress: _compile_and_say(kernel, cell, recorded, flags, where, progress))
    return _compile_and_say(kernel, cell, recorded, flags, where, _progress_writer(flags.get("progress")))


def _compile_and_say(kernel, cell, recorded, flags, where, progress):
    import triton
    with StderrCaptured(echo=True) as captured:
        compiled, stage, error = compile_recorded(kernel, cell, progress)
    if error is not None:
        result = {"status": "error", "stage": stage, "error": {
            "type": f"{type(error).__module__}.{type(error).__name__}", "message": error_message(error),
            "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__))}}
        text = error_message(error)
        same = stage == recorded.get("stage") and same_failure(recorded.get("message"), text + captured.text)
        print(f"{'reproduces' if same else 'fails differently'}: {where} fails in stage {stage}"
              f"{'' if same else ' (recorded: ' + str(recorded.get('stage')) + ', ' + str(recorded.get('message')) + ')'}")
        print(f"{type(error).__name__}: {text}")
        problems = None
    else:
        md = compiled.metadata._asdict()
        metadata = {k: md[k] for k in ("name", "num_warps", "num_ctas", "num_stages", "shared", "tmem_size",
                                      "cluster_dims", "warp_size") if k in md}
        result = {"status": "ok", "metadata": metadata}
        problems = launch_problems(metadata, recorded.get("launch_limits") or {})
        if problems:
            print(f"reproduces: {where} compiles, and the kernel cannot launch there:")
            print("\n".join(f"  {p}" for p in problems))
        else:
            print(f"no longer reproduces: {where} compiles it")
        print(f"metadata: {json.dumps(metadata)}")
    if flags.get("result"):  # for triton-portcheck, which judges the outcome: 0 means it is written
        result["triton_version"] = triton.__version__
        with open(flags["result"], "w") as f:
            json.dump(result, f)
        return 0
    return 1 if error is not None or problems else 0
