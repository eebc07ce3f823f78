"""`repro --shrink`: a smaller kernel that fails the same way, found within a time bound.

Greedy, one change at a time, kept when the compile still fails in the same stage with the same
error (its type and its decisive line, locations aside): drop a statement, drop a keyword
argument, replace an operation by one of its operands, halve a power-of-two constexpr. The tool checks the shrunk file's
fingerprint afterwards and keeps the original when it differs.
"""
import ast
import copy
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import time

from . import inline, script
from ..compile import portable, stages

MIN_BLOCK = 16


class Shrunk:
    """The outcome: the kernel (from the last kept candidate), its specialisation, what it reaches."""

    def __init__(self, fn, spec, reached, before, seconds=0.0, tried=0, note=""):
        self.fn, self.spec, self.reached = fn, spec, reached
        self.before, self.seconds, self.tried, self.note = before, seconds, tried, note

    def figures(self):
        after = _kernel_lines(self.reached)
        return {"before_lines": self.before, "after_lines": after, "seconds": round(self.seconds, 1),
                "candidates": self.tried, "note": self.note}


def _kernel_lines(reached):
    return sum(d.text.count("\n") for d in reached.functions.values())


class Attempts:
    """Compiles candidates in files of one scratch folder (Triton's JIT wants a function's
    source from a file) until the time runs out."""

    def __init__(self, request, deadline):
        self.request, self.deadline = request, deadline
        self.target = stages.make_target(request.target)
        self.folder = tempfile.mkdtemp(prefix="portcheck-shrink-")
        self.tried = 0

    def close(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    def load(self, code, name):
        """The kernel `name` of a module made of `code`."""
        path = os.path.join(self.folder, f"candidate_{self.tried}.py")
        with open(path, "w") as f:
            f.write("import triton\n" + code)
        spec = importlib.util.spec_from_file_location(f"portcheck_shrink_{self.tried}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, name)

    def outcome(self, fn, spec):
        """(stage, error type, decisive line) of a failing compile; None when it compiles."""
        cell = {"target": (self.target.backend, self.target.arch, self.target.warp_size),
                "signature": spec.signature, "constexprs": spec.constexprs, "attrs": spec.attrs,
                "options": spec.options}
        with StderrCaptured() as captured:
            _, stage, error = portable.compile_recorded(fn, cell)
        if error is None:
            return None
        return stage, type(error).__name__, _decisive(portable.error_message(error), captured.text)

    def try_code(self, code, name, spec, reference):
        """The candidate's kernel when it fails as `reference` does, else None."""
        if time.monotonic() > self.deadline:
            raise TimeoutError
        self.tried += 1
        try:
            fn = self.load(code, name)
        except Exception:  # a candidate that is no longer Python the module runs
            return None
        return fn if self.outcome(fn, spec) == reference else None


def shrink(fn, spec, request, reached, budget_s):
    started = time.monotonic()
    attempts = Attempts(request, started + budget_s)
    before = _kernel_lines(reached)
    name = reached.names_of[id(fn)]
    try:
        reference = attempts.outcome(fn, spec)
        if reference is None:
            return Shrunk(fn, spec, reached, before, note="the kernel compiles: nothing to shrink")
        best = {"fn": fn, "spec": spec}  # the last kept candidate, also when the time runs out
        try:
            _shrink_kernel(attempts, reached, name, best, reference)
            _smaller_blocks(attempts, best, reference)
        except TimeoutError:
            note = f"stopped at the time bound ({budget_s:g} s)"
        else:
            note = "no single change left keeps the failure"
        return Shrunk(best["fn"], best["spec"], inline.collect(best["fn"]), before, time.monotonic() - started,
                      attempts.tried, note)
    finally:
        attempts.close()


def _shrink_kernel(attempts, reached, name, best, reference):
    """Statement drops and operand choices, to a fixpoint."""
    kernel = reached.functions[name]
    others = {k: d for k, d in reached.functions.items() if k != name}
    tree = ast.parse(kernel.text)
    seen = {ast.unparse(tree)}  # a candidate tried (or kept) once is not tried again
    changed = True
    while changed:
        changed = False
        for candidate in _candidates(tree):
            text = ast.unparse(candidate) + "\n"
            if text.rstrip("\n") in seen:
                continue
            seen.add(text.rstrip("\n"))
            found = attempts.try_code(_module_code(reached, others, text), name, best["spec"], reference)
            if found is not None:
                tree, best["fn"], changed = candidate, found, True
                break


def _module_code(reached, others, kernel_text):
    trimmed = inline.Reached()
    trimmed.imports, trimmed.values = reached.imports, reached.values
    trimmed.functions = {"kernel": inline.Definition("kernel", kernel_text), **others}
    return script.copied_code(trimmed)


def _candidates(tree):
    """Copies of `tree`, each with one statement dropped (last first), one keyword argument of a
    call dropped (mask=, other=), or one binary operation replaced by an operand."""
    statements = [(i, j) for i, body in enumerate(_bodies(tree)) for j in range(len(body))]
    for i, j in reversed(statements):
        candidate = copy.deepcopy(tree)
        body = _bodies(candidate)[i]
        del body[j]
        if not body:
            body.append(ast.Pass())
        yield candidate
    keywords = [(k, j) for k, call in enumerate(_calls(tree)) for j in range(len(call.keywords))]
    for k, j in keywords:
        candidate = copy.deepcopy(tree)
        del _calls(candidate)[k].keywords[j]
        yield candidate
    operations = sum(isinstance(n, ast.BinOp) for n in ast.walk(tree))
    for k in range(operations):
        for side in ("left", "right"):
            candidate = copy.deepcopy(tree)
            _replace_operation(candidate, k, side)
            yield candidate


def _calls(tree):
    return [n for n in ast.walk(tree.body[0]) if isinstance(n, ast.Call)]


def _bodies(tree):
    """Every statement list inside the kernel's def, in a fixed walk order."""
    function = tree.body[0]
    return [getattr(node, field) for node in ast.walk(function) for field in ("body", "orelse")
            if isinstance(getattr(node, field, None), list) and getattr(node, field)
            and isinstance(getattr(node, field)[0], ast.stmt)]


def _replace_operation(tree, k, side):
    operations = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp)]
    target = operations[k]
    chosen = getattr(target, side)
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, chosen)
            elif isinstance(value, list):
                parent.__dict__[field] = [chosen if v is target else v for v in value]


def _smaller_blocks(attempts, best, reference):
    """Halves each power-of-two integer constexpr above MIN_BLOCK while the failure stays."""
    for key, value in list(best["spec"].constexprs.items()):
        spec = best["spec"]
        while type(value) is int and value > MIN_BLOCK and value & (value - 1) == 0:
            smaller = stages.Specialisation(spec.signature, {**spec.constexprs, key: value // 2}, spec.attrs,
                                            spec.options)
            if time.monotonic() > attempts.deadline:
                raise TimeoutError
            attempts.tried += 1
            if attempts.outcome(best["fn"], smaller) != reference:
                break
            best["spec"], spec, value = smaller, smaller, value // 2


def _decisive(message, stderr):
    """The line that names the failure, with what moves when the kernel's code does made alike
    (line:column locations, SSA values, #loc references, addresses, temporary files); the rest
    of it, shapes included, as the fingerprint keeps it."""
    lines = [line.strip() for line in (stderr + "\n" + message).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    chosen = errors[0] if errors else (lines[-1] if lines else "")
    for pattern, same in ((r"\S*:\d+:\d+", "LOC"), (r"%[\w.#]+", "%V"), (r"#loc\d*", "#loc"),
                          (r"0x[0-9a-fA-F]+", "0x"), (r"/tmp/\S+", "TMP"), (r"\bat \d+:\d+", "at")):
        chosen = re.sub(pattern, same, chosen)
    return chosen


class StderrCaptured:
    """File descriptor 2 into a temporary file meanwhile (MLIR prints its diagnostics there),
    shown again afterwards when `echo`: a candidate's compile is read, not shown."""

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
