"""Which third-party modules a kernel's module imports before any of the user's own code runs,
read from the source without executing it.

A base zygote (server/zygote.py) imports those once, and the zygotes that import the user's package for
each target are forked from it: torch and transformers (10+ s with a real library) are imported
once per run instead of once per target. That is only the same as the user's own import if
nothing that could change those imports ran before them, so the scan follows the import in
execution order - the package's `__init__` files first, the user's modules where they are
imported - and stops at the first module-level statement that could: one that runs the user's
own code (a call to a function the package defines or imports from itself, a decorator, base
class or metaclass of its own), that calls into `os`, `sys`, `importlib`, `builtins`, `site`,
`warnings`, `ctypes` or `multiprocessing` other than to read (`os.environ.get`, `os.path.*`
read; `os.environ.setdefault`, `sys.path.insert`, `warnings.simplefilter` do not), that hands
one of those to a call (`mock.patch.dict(os.environ, ...)`), that stores into a module's
attributes or items (`os.environ["X"] = ...`, `torch.backends.x = ...`), or `setattr`, `exec`,
`eval`, `__import__`. Calls into other libraries (`logging.getLogger`, `tl.constexpr`) do not
stop it. Imports under `if`, `for`, `while` or in a function are left out (they may not run, or
run later); imports in `try` and `with` are kept (the base stops at the first that is not
installed, where the user's import would take its `except`).

Third party means: neither the kernel's own top-level package (or file) nor anything found in the
manifest's folders (its folder and `pythonpath`), nor the standard library, nor a module this
process has already imported (Triton). The scan reads at most _MAX_FILES files of at most
_MAX_FILE_BYTES each; what it cannot read or parse ends it where it is.
"""
import ast
import os
import sys

_MAX_FILES = 200
_MAX_FILE_BYTES = 2 << 20
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


class _Stop(Exception):
    """A statement that could change what a later import does: the scan ends here."""


class _Scan:

    def __init__(self, folders, unit):
        self.folders = [f for f in folders if f]
        self.unit = unit
        self.found = []  # (module, [names]) in the order they run
        self.seen_files = set()
        self.seen_modules = set()

    # --- where the user's modules are -------------------------------------------------------
    def user_file(self, module):
        """The source file of the user's `module` (a.b.c) in the manifest's folders, or None."""
        parts = module.split(".")
        # The kernel's own package may be installed (site-packages) rather than in the folders.
        where = self.folders + (list(sys.path) if parts[0] == self.unit else [])
        for folder in where:
            if not isinstance(folder, str) or not folder:
                continue
            base = os.path.join(folder, *parts)
            for path in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(path):
                    return path
        return None

    def is_user(self, top):
        if top == self.unit:
            return True
        return any(os.path.isfile(os.path.join(f, top + ".py")) or os.path.isdir(os.path.join(f, top))
                   for f in self.folders)

    # --- following the import ---------------------------------------------------------------
    def module(self, name, names=()):
        """`import name` / `from name import names`, as it runs: parents first."""
        top = name.split(".")[0]
        if not self.is_user(top):
            self.third_party(name, names)
            return
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            self.user_module(".".join(parts[:depth]))
        for attribute in names:  # `from pkg import submodule` imports it
            if attribute != "*" and self.user_file(f"{name}.{attribute}"):
                self.user_module(f"{name}.{attribute}")

    def third_party(self, name, names):
        top = name.split(".")[0]
        if top in _STDLIB or top in sys.builtin_module_names or name in sys.modules:
            return
        if (name, tuple(names)) not in {(m, tuple(n)) for m, n in self.found}:
            self.found.append((name, list(names)))

    def user_module(self, module):
        if module in self.seen_modules:
            return
        self.seen_modules.add(module)
        path = self.user_file(module)
        if path is not None:
            package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
            self.file(path, package)

    def file(self, path, package):
        if path in self.seen_files:
            return
        self.seen_files.add(path)
        if len(self.seen_files) > _MAX_FILES:
            raise _Stop()
        self.statements(_parsed(path).body, package, _Names(self), runs=True)

    def statements(self, body, package, names, runs):
        """`runs`: these statements run at import (else they may not: their imports are not
        followed, but what they do still stops the scan)."""
        for node in body:
            self.statement(node, package, names, runs)

    def statement(self, node, package, names, runs):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.bind_import(node, package)
            if runs:
                self.an_import(node, package)
            return
        if names.could_change_imports(node):
            raise _Stop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.bind(node.name, _USER)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in getattr(node, "targets", None) or [node.target]:
                for bound in ast.walk(target):
                    if isinstance(bound, ast.Name):
                        names.bind(bound.id, _USER)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return  # its body runs when called, not at import
        # Try and with bodies run (a handler may not); anything else may not run at import.
        body_runs = runs and isinstance(node, (ast.Try, ast.With))
        for field in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(node, field, None) or []:
                if isinstance(child, ast.ExceptHandler):
                    self.statements(child.body, package, names, False)
                elif isinstance(child, ast.stmt):
                    self.statement(child, package, names, body_runs)

    def an_import(self, node, package):
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.module(alias.name)
            return
        self.module(_absolute(node, package), [alias.name for alias in node.names])


_USER = "<user>"  # a name bound to the user's own code: calling it runs that code
# Modules and builtins whose use can change what a later import does: the process's environment,
# the import system, warning filters (which can turn a warning into an exception), raw memory.
# Not logging: `logger = logging.getLogger(__name__)` is in most modules, and a logging set-up
# changes what is printed, not what is imported.
_GLOBAL_STATE = frozenset({"os", "sys", "importlib", "builtins", "site", "warnings", "ctypes",
                           "multiprocessing"})
_STATEFUL_BUILTINS = frozenset({"setattr", "delattr", "exec", "eval", "__import__", "globals", "vars",
                                "__builtins__"})
# Calls into those modules that only read.
_READ_ONLY = ("os.path.", "os.environ.get", "os.getenv", "os.getcwd", "os.cpu_count", "os.getpid",
              "os.fspath", "os.environ.copy", "os.get_terminal_size", "sys.getrecursionlimit")


def _absolute(node, package):
    """The module an ImportFrom names; raises _Stop for a relative one that cannot resolve."""
    if node.level == 0:
        return node.module
    if not package:  # a relative import in a file loaded by path fails in the user's run too
        raise _Stop()
    parts = package.split(".")
    if node.level > len(parts):
        raise _Stop()
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


class _Names:
    """What the names of one file stand for, as far as the scan needs: a module or an object of
    one (its dotted origin), or the user's own code (_USER)."""

    def __init__(self, scan):
        self.scan = scan
        self.origin = {}

    def bind(self, name, origin):
        self.origin[name] = origin

    def bind_import(self, node, package):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name if alias.asname else alias.name.split(".")[0]
                self.bind(alias.asname or name, self._mark(name))
            return
        try:
            module = _absolute(node, package)
        except _Stop:
            module = "."
        for alias in node.names:
            self.bind(alias.asname or alias.name, self._mark(f"{module}.{alias.name}"))

    def _mark(self, dotted):
        return _USER if dotted.startswith(".") or self.scan.is_user(dotted.split(".")[0]) else dotted

    def resolve(self, node):
        """'os.environ.get' for `_os.environ.get` (after `import os as _os`), _USER for the user's
        code, the plain dotted text for a builtin; None for anything but names and attributes."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.origin.get(node.id, node.id)
        if root == _USER:
            return _USER
        return ".".join([root, *reversed(parts)])

    def stateful(self, dotted):
        return dotted is not None and dotted != _USER and (
            dotted.split(".")[0] in _GLOBAL_STATE or dotted in _STATEFUL_BUILTINS)

    def could_change_imports(self, statement):
        """Whether this statement's own expressions (not its nested statements) run the user's
        code, call into process-wide state other than to read it, store into a module's
        attributes or items, or hand process-wide state to a call (`patch.dict(os.environ)`)."""
        if self._runs_user_code(statement):
            return True
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                continue
            for node in ast.walk(child):
                if isinstance(node, ast.Call) and self._call_could(node):
                    return True
                if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    target = self.resolve(node.value.value if isinstance(node.value, ast.Subscript) else node.value)
                    if self.stateful(target) or (target not in (None, _USER) and "." in target):
                        return True  # into a module's object: a patch a later import may see
        return False

    def _runs_user_code(self, statement):
        """A decorator, base class or metaclass of the user's runs their code at definition."""
        decorators = getattr(statement, "decorator_list", None) or []
        bases = list(getattr(statement, "bases", None) or []) + [k.value for k in getattr(statement, "keywords", None) or []]
        return any(self.resolve(e.func if isinstance(e, ast.Call) else e) == _USER for e in decorators + bases)

    def _call_could(self, call):
        callee = self.resolve(call.func)
        if callee == _USER:
            return True
        if self.stateful(callee) and not callee.startswith(_READ_ONLY):
            return True
        arguments = list(call.args) + [k.value for k in call.keywords]
        return any(self.stateful(self.resolve(node)) for argument in arguments for node in ast.walk(argument)
                   if isinstance(node, (ast.Name, ast.Attribute)) and not _is_callee(node, argument))


def _is_callee(node, tree):
    """Whether `node` is (part of) the function a call in `tree` calls: `os.path.dirname` in
    `os.path.dirname(x)` reads, it is not handed to anyone."""
    for call in ast.walk(tree):
        if isinstance(call, ast.Call):
            for part in ast.walk(call.func):
                if part is node:
                    return True
    return False


_PARSED = {}  # path -> (modification time, size, tree): a package's __init__ files serve every module


def _parsed(path):
    try:
        stat = os.stat(path)
        if stat.st_size > _MAX_FILE_BYTES:
            raise _Stop()
        cached = _PARSED.get(path)
        if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
            return cached[2]
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        raise _Stop() from None
    _PARSED[path] = (stat.st_mtime_ns, stat.st_size, tree)
    return tree


def third_party_imports(ref):
    """[(module, [names])] that the kernel reference's import (a messages.KernelRef) runs before
    any user code that could affect them, in order; [] when there are none or nothing could be
    read."""
    folders = [ref.import_root, *(ref.pythonpath or ())]
    if ref.file:
        scan = _Scan(folders, None)
        start = lambda: scan.file(ref.file, None)  # noqa: E731
    else:
        name = ref.module or ""
        scan = _Scan(folders, name.split(".")[0])
        start = lambda: scan.module(name)  # noqa: E731
    try:
        start()
    except _Stop:
        pass
    except Exception:  # never a reason to fail: the zygotes then import everything themselves
        pass
    return scan.found
