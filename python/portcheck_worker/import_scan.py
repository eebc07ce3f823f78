"""Which third-party modules a kernel's module imports before any of the user's own code runs,
read from the source without executing it.

A base zygote (zygote.py) imports those once, and the zygotes that import the user's package for
each target are forked from it: torch and transformers (10+ s with a real library) are imported
once per run instead of once per target. That is only the same as the user's own import if
nothing of the user's that could change those imports ran before them, so the scan follows the
import in execution order - the package's `__init__` files first, the user's modules where they
are imported - and stops at the first module-level statement that touches process-wide state an
import reads: anything naming `os`, `sys`, `importlib`, `builtins`, `site`, `warnings`,
`ctypes`, `multiprocessing`, `environ`, `putenv`, `setattr`, `exec`, `eval` or
`__import__` (or a name the file bound to one of them: `import os as _os`), such as
`os.environ.setdefault(...)` or `sys.path.insert(...)`. Other calls (a library registering its
ops) do not stop it. Imports under `if`, `for`, `while` or in a function are left out (they may
not run, or run later); imports in `try` and `with` are kept (a failing optional import fails
the same way in the base).

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
        try:
            if os.path.getsize(path) > _MAX_FILE_BYTES:
                raise _Stop()
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=path)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            raise _Stop() from None
        self.statements(tree.body, package, set(_GLOBAL_STATE), runs=True)

    def statements(self, body, package, blocked, runs):
        """`runs`: these statements run at import (else they may not: their imports are not
        followed, but what they touch still stops the scan)."""
        for node in body:
            self.statement(node, package, blocked, runs)

    def statement(self, node, package, blocked, runs):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _note_aliases(node, blocked)
            if runs:
                self.an_import(node, package)
            return
        if _changes_state(node, blocked):
            raise _Stop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return  # its body runs when called, not at import
        # Try and with bodies run (a handler may not); anything else may not run at import.
        body_runs = runs and isinstance(node, (ast.Try, ast.With))
        for field in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(node, field, None) or []:
                if isinstance(child, ast.ExceptHandler):
                    self.statements(child.body, package, blocked, False)
                elif isinstance(child, ast.stmt):
                    self.statement(child, package, blocked, body_runs)

    def an_import(self, node, package):
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.module(alias.name)
            return
        names = [alias.name for alias in node.names]
        if node.level == 0:
            self.module(node.module, names)
            return
        if not package:  # a relative import in a file loaded by path fails in the user's run too
            raise _Stop()
        parts = package.split(".")
        if node.level > len(parts):
            raise _Stop()
        base = ".".join(parts[:len(parts) - node.level + 1])
        self.module(f"{base}.{node.module}" if node.module else base, names)


# Names whose use at module level can change what a later import does: the process's
# environment, the import system, warning filters (which can turn a warning into an exception),
# raw memory. Not logging: `logger = logging.getLogger(__name__)` is in most modules, and a
# logging set-up changes what is printed, not what is imported.
_GLOBAL_STATE = frozenset({"os", "sys", "importlib", "builtins", "site", "warnings", "ctypes",
                           "multiprocessing", "environ", "putenv", "setattr", "exec", "eval", "__import__",
                           "__builtins__", "globals"})


# Calls through those names that only read: `os.environ.get(...)`, `os.path.join(...)`.
_READ_ONLY_CALLS = ("environ.get", "getenv", "path.", "getcwd", "cpu_count", "getpid", "fspath",
                    "environ.copy", "get_terminal_size", "getLogger")


def _dotted(node):
    """'os.environ.get' for that expression; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _changes_state(statement, blocked):
    """Whether this statement's own expressions (not its nested statements) call through, or
    store into, a name that holds process-wide state."""
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, ast.stmt):
            continue
        for node in ast.walk(child):
            target = None
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                if name and name.split(".")[0] in blocked:
                    rest = name.partition(".")[2]
                    if not rest or not rest.startswith(_READ_ONLY_CALLS):
                        return True
            elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                target = node.value
            if target is not None:
                name = _dotted(target)
                if name is None and isinstance(target, ast.Subscript):
                    name = _dotted(target.value)
                if name and name.split(".")[0] in blocked:
                    return True
    return False


def _note_aliases(node, blocked):
    """`import os as _os`, `from os import environ as env`: those names touch global state too."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in _GLOBAL_STATE:
                blocked.add((alias.asname or alias.name).split(".")[0])
    elif node.level == 0 and node.module and node.module.split(".")[0] in _GLOBAL_STATE:
        for alias in node.names:
            blocked.add(alias.asname or alias.name)


def third_party_imports(ref):
    """[(module, [names])] that the kernel reference's import runs before any user code that
    could affect them, in order; [] when there are none or nothing could be read."""
    folders = [ref.get("import_root")] + list(ref.get("pythonpath") or [])
    if ref.get("file"):
        scan = _Scan(folders, None)
        start = lambda: scan.file(ref["file"], None)  # noqa: E731
    else:
        name = ref.get("module") or ""
        scan = _Scan(folders, name.split(".")[0])
        start = lambda: scan.module(name)  # noqa: E731
    try:
        start()
    except _Stop:
        pass
    except Exception:  # never a reason to fail: the zygotes then import everything themselves
        pass
    return scan.found
