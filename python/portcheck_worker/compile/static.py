"""Static pre-checks: predict from the source, before compiling, which cells must fail.

Two causes are checked, both against tables read from the installed Triton (never copied):
- a libdevice function the cell's backend does not define (Triton maps tl.extra.libdevice to
  triton.language.extra.cuda.libdevice or ...hip.libdevice when compiling);
- an fp8 dtype the target does not support (the backend's parse_options for that target).

The kernel and every @triton.jit function it calls are scanned. `if` tests made of
triton.language.target_info calls (is_hip(), is_cuda(), cuda_capability_geq(9), ...), `not`,
`and` and `or` are evaluated for the cell's target, so a guarded branch raises no alarm; any other
condition (constexpr arguments included) is not evaluated and both branches are scanned.
"""
import ast
import os
import time

from . import driver, loader, releases
from .stages import make_target, source_location

GUARD_MODULE = "triton.language.target_info"


def tables(target_specs):
    """libdevice names per backend and supported fp8 dtypes per target, from the installed Triton."""
    import triton.language.extra.cuda.libdevice as cuda_libdevice
    import triton.language.extra.hip.libdevice as hip_libdevice
    from triton.compiler.compiler import make_backend

    def public(module):
        return sorted(n for n, v in vars(module).items()
                      if not n.startswith("_") and callable(v) and getattr(v, "__module__", "") == module.__name__)

    fp8 = {}
    for spec in target_specs:
        name = f"{spec.backend}:{spec.arch}"
        try:
            backend = make_backend(make_target(spec))
            fp8[name] = releases.current().fp8_dtypes(backend.parse_options({}), backend)
        except Exception as e:  # reported by the targets table, not fatal here
            fp8[name] = {"error": f"{type(e).__name__}: {e}"}
    return {"libdevice": {"cuda": public(cuda_libdevice), "hip": public(hip_libdevice)}, "fp8": fp8}


class _Scanner(ast.NodeVisitor):
    """Collects libdevice calls, fp8 dtype uses and called JIT functions of one function body."""

    def __init__(self, fn, decide):
        self.fn = fn
        self.scope = dict(fn.__globals__)
        try:
            import inspect
            self.scope.update(inspect.getclosurevars(fn.fn).nonlocals)
        except (TypeError, ValueError):
            pass
        self.decide = decide
        self.libdevice = []  # (name, line)
        self.fp8 = []  # (dtype, line)
        self.callees = []

    def resolve(self, node):
        """The Python object an expression of names and attributes denotes, or None."""
        if isinstance(node, ast.Name):
            return self.scope.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def visit_Attribute(self, node):
        import triton.language as tl
        base = self.resolve(node.value)
        if base is not None and getattr(base, "__name__", "").startswith("triton.language.extra") \
                and getattr(base, "__name__", "").endswith("libdevice"):
            self.libdevice.append((node.attr, node.lineno))
        value = self.resolve(node)
        if isinstance(value, tl.dtype) and str(value).startswith("fp8"):
            self.fp8.append((str(value), node.lineno))
        self.generic_visit(node)

    def visit_Name(self, node):
        from triton.runtime.jit import JITFunction
        value = self.scope.get(node.id)
        if isinstance(value, JITFunction) and value is not self.fn:
            self.callees.append(value)

    def _branch(self, node):
        verdict = self.decide(node.test, self)
        self.visit(node.test)
        if verdict is not False:
            for child in node.body if isinstance(node.body, list) else [node.body]:
                self.visit(child)
        if verdict is not True:
            for child in node.orelse if isinstance(node.orelse, list) else [node.orelse]:
                self.visit(child)

    visit_If = _branch
    visit_IfExp = _branch


def _decider(target):
    """Evaluates target_info guards for `target`; None when a test is anything else."""

    def decide(test, scanner):
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = decide(test.operand, scanner)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [decide(v, scanner) for v in test.values]
            if isinstance(test.op, ast.And):
                return False if False in values else (True if all(v is True for v in values) else None)
            return True if True in values else (False if all(v is False for v in values) else None)
        if isinstance(test, ast.Call) and not test.keywords:
            fn = scanner.resolve(test.func)
            if getattr(fn, "__module__", "") != GUARD_MODULE and \
                    getattr(getattr(fn, "fn", None), "__module__", "") != GUARD_MODULE:
                return None
            try:
                args = [ast.literal_eval(a) for a in test.args]
            except ValueError:
                return None
            call = getattr(fn, "fn", fn)
            result = call(*args)
            return bool(getattr(result, "value", result))
        return None

    return decide


def _where(fn, line):
    """'gamma_ratio at kernels.py:32': AST lines count from the def."""
    source = source_location(fn)
    if source is None:
        return getattr(fn, "__name__", "?")
    return f"{fn.__name__} at {os.path.basename(source['file'])}:{source['line'] + line - 1}"


def scan_kernel(fn, target):
    """Findings of `fn` and everything it calls, with target_info guards decided for `target`."""
    driver.install(target)
    try:
        decide = _decider(target)
        seen, todo, found = set(), [fn], {"libdevice": [], "fp8": []}
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            scanner = _Scanner(current, decide)
            scanner.visit(current.parse())
            found["libdevice"] += [(name, _where(current, line)) for name, line in scanner.libdevice]
            found["fp8"] += [(dtype, _where(current, line)) for dtype, line in scanner.fp8]
            todo += scanner.callees
        return found
    finally:
        driver.uninstall()


def predict(request, table, scans):
    """A predicted failure of one cell request: {"reason", "stage", "what", "name"} or None.

    `scans` memoises scan_kernel per (function, target): what a scan finds never depends on the
    row, and a captured library has dozens of rows per kernel (issue 15: 2,201 rows of 66 kernels
    on 9 targets were 19,809 scans, each re-parsing the kernel and its callees)."""
    fn = loader.load_kernel(request.kernel)
    target = make_target(request.target)
    name = f"{target.backend}:{target.arch}"
    key = (id(fn), name)
    if key not in scans:
        scans[key] = (fn, scan_kernel(fn, target))  # fn kept: its id stays its own
    found = scans[key][1]
    defined = set(table["libdevice"].get(target.backend, []))
    for func, where in found["libdevice"]:
        if func not in defined:
            return {"stage": "frontend", "what": "libdevice", "name": func,
                    "reason": f"libdevice.{func} ({where}) is not defined for the {target.backend} backend, "
                              f"whose libdevice has {len(defined)} functions"}
    supported = table["fp8"].get(name, [])
    if isinstance(supported, list):
        used = list(found["fp8"])
        for arg, ty in (request.signature or {}).items():
            if isinstance(ty, str) and ty.lstrip("*k").split(":")[0].startswith("fp8"):
                used.append((ty.lstrip("*k").split(":")[0], f"the signature of {arg}"))
        for dtype, where in used:
            if dtype not in supported:
                return {"stage": "frontend", "what": "fp8", "name": dtype,
                        "reason": f"{dtype} ({where}) is not supported on {name}, which supports "
                                  f"{', '.join(supported) or 'no fp8 dtype'}"}
    return None


def predictions(cells, target_specs):
    """{cell id: prediction or None}, plus the tables used and the seconds it took."""
    started = time.perf_counter()
    table = tables(target_specs)
    out, scans = {}, {}
    for cell in cells:
        try:
            out[str(cell.id)] = predict(cell.request, table, scans)
        except Exception:  # an unloadable kernel is reported by its compile; no prediction
            out[str(cell.id)] = None
    return {"cells": out, "tables": table, "seconds": time.perf_counter() - started}
