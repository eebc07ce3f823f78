"""What a kernel reaches, as text a reproducer can carry: the source of every @triton.jit
function and constexpr_function it calls, its constexpr and literal globals, and the imports of
what lives in Triton or the standard library.

Anything else (a user module, an object with no source, a closure) cannot be copied: it is named
with the reason, and the reproducer imports the kernel's module instead (script.py).
"""
import ast
import builtins
import math
import sys


class Definition:
    """One top-level statement of the reproducer: a function's source, a constant, an import."""

    def __init__(self, name, text, uses=()):
        self.name, self.text, self.uses = name, text, set(uses)


class Reached:
    """The definitions a kernel needs, by the name they bind; `blockers` says what could not be
    copied and why."""

    def __init__(self):
        self.imports = {}  # name -> Definition (an import line)
        self.values = {}  # name -> Definition (a constant)
        self.functions = {}  # name -> Definition (a function's source, decorated)
        self.blockers = []
        self.names_of = {}  # id(function object) -> the name it is defined under

    def bound(self):
        return {**self.imports, **self.values, **self.functions}

    def bind(self, kind, name, text, uses=()):
        table = getattr(self, kind)
        if name in self.bound() and self.bound()[name].text != text:
            self.blockers.append(f"{name}: two different objects are called {name} in the code it reaches")
            return
        table[name] = Definition(name, text, uses)


def collect(fn, extra=()):
    """Everything `fn` (a JITFunction) and the functions in `extra` (constexpr arguments that are
    @triton.jit functions) reach."""
    reached = Reached()
    for root in (fn, *extra):
        _function(root, reached)
    return reached


def _function(obj, reached):
    if id(obj) in reached.names_of:
        return reached.names_of[id(obj)]
    python_fn = obj.fn
    name = python_fn.__name__
    reached.names_of[id(obj)] = name
    if "<locals>" in python_fn.__qualname__ or python_fn.__closure__:
        reached.blockers.append(f"{name}: defined inside a function (its closure cannot be copied)")
        return name
    text = obj.src if isinstance(getattr(obj, "src", None), str) else getattr(obj, "_src", None)
    if not text:
        reached.blockers.append(f"{name}: Triton kept no source for it")
        return name
    uses = free_names(text)
    reached.bind("functions", name, _decorator(obj) + "\n" + text.rstrip() + "\n", uses)
    for used in sorted(uses):
        if used in python_fn.__globals__:
            _global(used, python_fn.__globals__[used], reached)
    return name


def _decorator(obj):
    """The decorator that makes the same kind of object: @triton.jit with the arguments that
    change how it compiles, or the constexpr_function decorator of its release."""
    from triton.runtime.jit import JITFunction
    if not isinstance(obj, JITFunction):
        module = type(obj).__module__
        owner = sys.modules.get(module)
        if owner is not None and getattr(owner, "constexpr_function", None) is not None:
            return f"@{module}.constexpr_function"
        return "@triton.constexpr_function"
    arguments = []
    if getattr(obj, "noinline", False):
        arguments.append("noinline=True")
    skipped = [p.name for p in getattr(obj, "params", []) if getattr(p, "do_not_specialize", False)]
    if skipped:
        arguments.append(f"do_not_specialize={skipped!r}")
    return f"@triton.jit({', '.join(arguments)})" if arguments else "@triton.jit"


def _global(name, value, reached):
    """Binds `name` as the kernel's module binds it."""
    from triton.runtime.jit import JITFunction
    import triton.language as tl
    if _lives_in_triton_or_stdlib(value):
        line = import_line(name, value)
        if line:
            reached.bind("imports", name, line)
            return
    if isinstance(value, JITFunction) or type(value).__name__ == "ConstexprFunction":
        defined = _function(value, reached)
        if defined != name:
            reached.bind("values", name, f"{name} = {defined}\n", {defined})
        return
    if isinstance(value, tl.constexpr):
        text = literal(value.value)
        if text is not None:
            reached.bind("values", name, f"{name} = triton.language.constexpr({text})\n")
            return
    text = literal(value)
    if text is not None:
        reached.bind("values", name, f"{name} = {text}\n")
        return
    what = f"the module {value.__name__}" if type(value).__name__ == "module" else f"a {type(value).__name__}"
    reached.blockers.append(f"{name}: {what}, which is neither a Triton function nor a constant")


def _lives_in_triton_or_stdlib(value):
    """A module, class or function of Triton or of the standard library (an instance, such as a
    dtype or a constexpr, reports its class's module: it is copied as a value instead)."""
    is_module = type(value).__name__ == "module"
    module = value.__name__ if is_module else getattr(value, "__module__", None)
    if not isinstance(module, str) or not (is_module or hasattr(value, "__name__")):
        return False
    top = module.split(".")[0]
    return top == "triton" or top in sys.stdlib_module_names


def import_line(name, value):
    """`import a.b as name` for a module, `from a import b as name` for an object its module
    gives under its own name; None when neither reaches it."""
    if type(value).__name__ == "module":
        return f"import {value.__name__}\n" if name == value.__name__ else f"import {value.__name__} as {name}\n"
    module, own = getattr(value, "__module__", None), getattr(value, "__name__", None)
    if not own or getattr(sys.modules.get(module), own, None) is not value:
        return None
    return f"from {module} import {own}\n" if own == name else f"from {module} import {own} as {name}\n"


def literal(value):
    """Python source that evaluates to `value` (None, bools, numbers, strings, Triton dtypes,
    tuples of those), or None."""
    import triton.language as tl
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if type(value) is tl.dtype:
        return f"triton.language.dtype({value.name!r})"
    if isinstance(value, (tuple, list)):
        items = [literal(v) for v in value]
        if any(i is None and v is not None for i, v in zip(items, value)):
            return None
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return None


def free_names(source):
    """The global names a function's source reads: every name loaded that is not a parameter,
    assigned in it, or a builtin (the roots of `a.b.c` chains included)."""
    tree = ast.parse(source)
    loaded, local = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else local).add(node.id)
        elif isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
        elif isinstance(node, ast.alias):
            local.add((node.asname or node.name).split(".")[0])
    outer = tree.body[0] if tree.body else None
    if isinstance(outer, ast.FunctionDef):
        local.discard(outer.name)  # a recursive call reads the global
        loaded |= {n.id for d in outer.decorator_list for n in ast.walk(d) if isinstance(n, ast.Name)}
    return {n for n in loaded - local if not hasattr(builtins, n)}
