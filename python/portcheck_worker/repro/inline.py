"""What a kernel reaches, as text a reproducer can carry: the source of every @triton.jit
function and constexpr_function it calls, its constexpr and literal globals, and the imports of
what lives in Triton or the standard library.

Anything else (a user module, an object with no source, a closure) cannot be copied: it is named
with the reason, and the reproducer imports the kernel's module instead (script.py).

A reproducer is run by strangers, so nothing an object of the user's module says about itself
becomes code: a value is copied only when its type is exactly a builtin one (a subclass's own
__repr__ would write the text), a name only when it is an identifier, a module or a function only
when the module it names is the one that gives it, and a function's name is the one its source
defines. Anything else is a blocker, never text.
"""
import ast
import builtins
import importlib.machinery
import inspect
import keyword
import linecache
import math
import re
import sys
import textwrap
import tokenize
import types

# Nesting a literal may have: deeper (or a list that holds itself) is not a constant worth copying.
MAX_DEPTH = 16


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
    """Copies a @triton.jit or constexpr_function object; returns the name its source defines, or
    None when it cannot be copied (a blocker says why)."""
    if id(obj) in reached.names_of:
        return reached.names_of[id(obj)]
    python_fn = obj.fn
    text = code_source(python_fn)
    name, problem = defined_name(text)
    if not problem and _compiles_other_text(obj, text):
        problem = "the source Triton compiles of it is not its def's (set after it was defined)"
    shown = name or shown_name(_attribute(python_fn, "__name__"))
    qualname = _attribute(python_fn, "__qualname__")
    if type(qualname) is not str or "<locals>" in qualname or _attribute(python_fn, "__closure__"):
        problem = "defined inside a function (its closure cannot be copied)"
    elif type(_attribute(python_fn, "__globals__")) is not dict:
        problem = "it has no module globals to read"
    if problem:
        reached.names_of[id(obj)] = None
        reached.blockers.append(f"{shown}: {problem}")
        return None
    decorator = _decorator(obj, ast.parse(text).body[0])
    if decorator is None:
        reached.names_of[id(obj)] = None
        reached.blockers.append(f"{name}: its decorator's arguments are not plain names")
        return None
    reached.names_of[id(obj)] = name
    uses = free_names(text)
    reached.bind("functions", name, decorator + "\n" + text.rstrip() + "\n", uses)
    for used in sorted(uses):
        if used in python_fn.__globals__:
            _global(used, python_fn.__globals__[used], reached)
    return name


def code_source(python_fn):
    """The def as the interpreter compiled it, from its code object (its file and first line, the
    block from there, dedented, from `def` on, as Triton keeps a source): never from what the
    object carries about itself (`src`, `_src`, `__wrapped__`), which its code may have set to
    any text. None where the file cannot be read."""
    code = _attribute(python_fn, "__code__")
    if type(code) is not types.CodeType:
        return None
    lines = linecache.getlines(code.co_filename)
    if not lines or not 0 < code.co_firstlineno <= len(lines):
        return None
    try:
        block = "".join(inspect.getblock(lines[code.co_firstlineno - 1:]))
    except (IndentationError, SyntaxError, tokenize.TokenError):
        return None
    text = textwrap.dedent(block)
    start = re.search(r"^def\s+\w+\s*\(", text, re.MULTILINE)
    return text[start.start():] if start else None


def _compiles_other_text(obj, text):
    """Whether Triton's frontend compiles a text of a @triton.jit function other than its def's:
    the copy would then not be the kernel that was checked. (A constexpr_function runs its code
    object, whatever text it carries.)"""
    from triton.runtime.jit import JITFunction
    if not isinstance(obj, JITFunction):
        return False
    kept = obj.src if type(getattr(obj, "src", None)) is str else getattr(obj, "_src", None)
    return type(kept) is str and kept.strip() != text.strip()


def defined_name(text):
    """(the name `text` defines, None) when it is the source Triton keeps of a function: exactly
    one undecorated `def` whose definition runs nothing (no call in its defaults or annotations);
    else (None, why). The name is the def's, not the object's __name__, which code may change."""
    if type(text) is not str or not text:
        return None, "Triton kept no source for it"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, "the source Triton kept of it does not parse"
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].decorator_list:
        return None, "the source Triton kept of it is not one plain def"
    definition = tree.body[0]
    arguments = definition.args
    evaluated = [*arguments.defaults, *arguments.kw_defaults, definition.returns,
                 *(a.annotation for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs),
                 *(a.annotation for a in (arguments.vararg, arguments.kwarg) if a is not None)]
    if any(isinstance(n, ast.Call) for e in evaluated if e is not None for n in ast.walk(e)):
        return None, "its definition calls something (in a default value or an annotation)"
    return definition.name, None


def identifier(text):
    return type(text) is str and text.isidentifier() and not keyword.iskeyword(text)


def dotted_name(text):
    """`a.b.c`, each part an identifier."""
    return type(text) is str and all(identifier(part) for part in text.split("."))


def shown_name(text):
    """A name as a blocker may show it (the header's comment() escapes it further)."""
    return str.__str__(text) if type(text) is str else "(a name that is not a string)"


def _decorator(obj, definition):
    """The decorator that makes the same kind of object: @triton.jit with the arguments that
    change how it compiles, or the constexpr_function decorator of its release; None when those
    cannot be written from plain names."""
    from triton.runtime.jit import JITFunction
    if not isinstance(obj, JITFunction):
        module = type(obj).__module__
        owner = sys.modules.get(module) if dotted_name(module) else None
        if owner is not None and getattr(owner, "constexpr_function", None) is not None:
            return f"@{module}.constexpr_function"
        return "@triton.constexpr_function"
    arguments = []
    if getattr(obj, "noinline", False) is True:
        arguments.append("noinline=True")
    names = [a.arg for a in definition.args.posonlyargs + definition.args.args]
    params = list(getattr(obj, "params", []))
    skipped = [p.name for p in params if getattr(p, "do_not_specialize", False) is True]
    if skipped:
        if not all(identifier(n) and n in names for n in skipped):
            return None
        arguments.append("do_not_specialize=[" + ", ".join(str.__repr__(n) for n in skipped) + "]")
    return f"@triton.jit({', '.join(arguments)})" if arguments else "@triton.jit"


def _global(name, value, reached):
    """Binds `name` (an identifier of the kernel's source) as the kernel's module binds it."""
    import triton.language as tl
    line = import_line(name, value) if _lives_in_triton_or_stdlib(value) else None
    if line:
        reached.bind("imports", name, line)
        return
    if _is_triton_function(value):
        defined = _function(value, reached)
        if defined is not None and defined != name:
            reached.bind("values", name, f"{name} = {defined}\n", {defined})
        return
    if type(value) is tl.constexpr:
        text = literal(value.value)
        if text is not None:
            reached.bind("values", name, f"{name} = triton.language.constexpr({text})\n")
            return
    text = literal(value)
    if text is not None:
        reached.bind("values", name, f"{name} = {text}\n")
        return
    reached.blockers.append(f"{name}: {_what(value)}")


def _what(value):
    """Why a global is not copied, in a blocker's words."""
    import triton.language as tl
    if isinstance(value, types.ModuleType):
        module = _attribute(value, "__name__")
        if _lives_in_triton_or_stdlib(value):
            return f"the module {shown_name(module)}, which is not the module of that name that Python imports"
        return f"the module {shown_name(module)}, which is neither a Triton function nor a constant"
    inner = value.value if type(value) is tl.constexpr else value
    held = " held by a constexpr" if inner is not value else ""
    base = next((b for b in (bool, int, float, str, tuple, list) if isinstance(inner, b)), None)
    if base is not None and type(inner) is not base:
        return (f"a {shown_name(type(inner).__name__)}{held}, a subclass of {base.__name__}: only values of "
                "the exact builtin types are copied (a subclass could write any text as its value)")
    if _lives_in_triton_or_stdlib(value):
        return (f"a {shown_name(type(value).__name__)} that its module does not give under its name, "
                "which is neither a Triton function nor a constant")
    return f"a {shown_name(type(inner).__name__)}{held}, which is neither a Triton function nor a constant"


def _is_triton_function(value):
    """A @triton.jit function, or a constexpr_function of a release whose decorator makes Triton's
    own ConstexprFunction class (not a class of the user's that is called so)."""
    from triton.runtime.jit import JITFunction
    if isinstance(value, JITFunction):
        return True
    cls = type(value)
    module = cls.__module__
    return (cls.__name__ == "ConstexprFunction" and dotted_name(module) and module.split(".")[0] == "triton"
            and getattr(sys.modules.get(module), "ConstexprFunction", None) is cls)


def _attribute(value, name):
    """`value.name`, or None where asking runs into the object's own error."""
    try:
        return getattr(value, name, None)
    except Exception:  # a __getattr__ of the user's
        return None


def _lives_in_triton_or_stdlib(value):
    """A module, class or function of Triton or of the standard library (an instance, such as a
    dtype or a constexpr, reports its class's module: it is copied as a value instead)."""
    is_module = isinstance(value, types.ModuleType)
    module = _attribute(value, "__name__" if is_module else "__module__")
    if not dotted_name(module) or not (is_module or _attribute(value, "__name__") is not None):
        return False
    top = module.split(".")[0]
    return top == "triton" or top in sys.stdlib_module_names


def import_line(name, value):
    """`import a.b as name` for a module, `from a import b as name` for an object its module
    gives under its own name; None when neither reaches it. Every name in the line is an
    identifier, and the module it names is the one the kernel's module holds (sys.modules) and
    the one the import system finds by that name in a fresh interpreter."""
    if isinstance(value, types.ModuleType):
        module = _attribute(value, "__name__")
        if not dotted_name(module) or sys.modules.get(module) is not value or not found_by_import(module, value):
            return None
        return f"import {module}\n" if name == module else f"import {module} as {name}\n"
    module, own = _attribute(value, "__module__"), _attribute(value, "__name__")
    if not dotted_name(module) or not identifier(own) or _attribute(sys.modules.get(module), own) is not value \
            or not found_by_import(module, sys.modules.get(module)):
        return None
    return f"from {module} import {own}\n" if own == name else f"from {module} import {own} as {name}\n"


def found_by_import(name, module):
    """Whether `import name` finds this very module: its spec names it and comes from where the
    import system's own finders find that name. A module made at run time and registered under a
    standard library's name (sys.modules["this"]) is not what the name imports elsewhere."""
    spec = _attribute(module, "__spec__")
    if spec is None or getattr(spec, "name", None) != name:
        return False
    parent = name.rpartition(".")[0]
    path = _attribute(sys.modules.get(parent), "__path__") if parent else None
    for finder in (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter,
                   importlib.machinery.PathFinder):
        try:
            found = finder.find_spec(name, path)
        except Exception:  # a finder that refuses the name: the next one is asked
            found = None
        if found is not None:
            return found.origin == getattr(spec, "origin", None)
    return False


def literal(value, depth=0):
    """Python source that evaluates to `value` (None, bools, numbers, strings, Triton dtypes,
    tuples of those), or None. Exact types only, written by the builtin type's own repr: a
    subclass's __repr__ could write any text."""
    import triton.language as tl
    kind = type(value)
    if value is None or kind is bool:
        return "None" if value is None else ("True" if value is True else "False")
    if kind is str:
        return str.__repr__(value)
    if kind is int:
        try:
            return int.__repr__(value)
        except ValueError:  # more digits than int's string conversion allows
            return None
    if kind is float:
        return float.__repr__(value) if math.isfinite(value) else f"float('{float.__repr__(value)}')"
    if kind is tl.dtype:
        return _dtype(value)
    if kind in (tuple, list) and depth < MAX_DEPTH:
        items = [literal(v, depth + 1) for v in value]
        if any(i is None for i in items):
            return None
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return None


def _dtype(value):
    """triton.language.dtype('fp32') for a dtype that this name makes again."""
    import triton.language as tl
    name = value.__dict__.get("name")
    try:
        same = type(name) is str and tl.dtype(name) == value
    except Exception:  # not a name of a dtype
        same = False
    return f"triton.language.dtype({str.__repr__(name)})" if same else None


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
