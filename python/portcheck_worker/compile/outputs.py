"""The files a cell writes besides its result, for `--save-ir` and `export`: each IR stage, and a
compiled kernel's binary, assembly, metadata and parameter list, each written atomically.
"""
import os

from . import launch_rules
from ..base import protocol


class OutputError(Exception):
    """A file of --save-ir or export could not be written."""

    def __init__(self, path, error):
        super().__init__(f"cannot write {path}: {error}")
        self.path, self.error = path, error


def _write_file(path, data):
    """Whole or not at all: a temporary file renamed into place, removed again on any error."""
    mode = "wb" if isinstance(data, bytes) else "w"
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        with open(tmp, mode) as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(path, e.strerror or str(e)) from e


def _make_dirs(directory):
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise OutputError(e.filename or directory, e.strerror or str(e)) from e


IR_STAGES = ("ttir", "ttgir", "llir", "ptx", "amdgcn")


def save_partial_ir(texts, name, directory):
    """The stages a failing compile finished, named after the kernel (it has no metadata name),
    so that `bisect` and `diff --ir` can show where two releases' IR parted."""
    _make_dirs(directory)
    written = []
    for stage, text in texts.items():
        path = os.path.join(directory, f"{name}.{stage}")
        _write_file(path, text)
        written.append(path)
    return written


def save_ir(compiled, directory):
    """Every textual stage of the compile, for `diff --ir`."""
    _make_dirs(directory)
    written = []
    for stage in IR_STAGES:
        if stage in compiled.asm:
            path = os.path.join(directory, f"{compiled.metadata.name}.{stage}")
            _write_file(path, compiled.asm[stage])
            written.append(path)
    return written


def export_files(compiled, spec, fn, directory, scratch_params):
    """Writes the binary and its assembly, and lists the binary's parameters in order: the
    arguments that were not folded into the code (constexprs, and ints the JIT specialised to 1),
    then the scratch pointers the release's launchers append (`scratch_params`)."""
    import json as _json
    _make_dirs(directory)
    name = compiled.metadata.name
    binary_ext = "cubin" if "cubin" in compiled.asm else "hsaco"
    text_ext = "ptx" if binary_ext == "cubin" else "amdgcn"
    _write_file(os.path.join(directory, f"{name}.{binary_ext}"), compiled.asm[binary_ext])
    _write_file(os.path.join(directory, f"{name}.{text_ext}"), compiled.asm[text_ext])
    md = compiled.metadata._asdict()
    _write_file(os.path.join(directory, "metadata.json"),
                _json.dumps(md, default=protocol.jsonable, indent=1))
    params, folded = [], []
    for index, arg in enumerate(fn.arg_names):
        ty = spec.signature.get(arg)
        if ty == "constexpr" or (index, ) in spec.constexprs:
            value = spec.constexprs.get((index, ))
            value = getattr(value, "value", value)
            is_param_constexpr = fn.params[index].is_constexpr
            reason = "constexpr" if is_param_constexpr else (
                "integer equal to 1, specialised by the JIT" if value == 1 else "constant")
            folded.append({"name": arg, "value": value if isinstance(value, (int, float, bool, str)) else str(value),
                           "reason": reason})
        else:
            # A tuple argument's type is a tuple of types (Triton 3.3 on): given as its text, which
            # has no C type (export says so), rather than a value the schema refuses.
            params.append({"name": arg, "kind": "argument", "triton_type": ty if isinstance(ty, str) else str(ty),
                           "divisible_by_16": ["tt.divisibility", 16] in spec.attrs.get((index, ), [])})
    params.extend({"name": name, "kind": name, "triton_type": "*i8"} for name in scratch_params)
    # How it launches, by the rules that judge every cell (launch_rules.py, their one home).
    launch = launch_rules.launch_needs(md, md["target"].warp_size)
    launch["needs_shared_opt_in"] = binary_ext == "cubin" and \
        launch["shared_bytes"] > launch_rules.CUDA_SHARED_BYTES_WITHOUT_OPT_IN
    return {"directory": directory, "binary": f"{name}.{binary_ext}", "assembly": f"{name}.{text_ext}",
            "params": params, "folded": folded, "launch": launch}
