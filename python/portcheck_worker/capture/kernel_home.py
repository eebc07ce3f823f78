"""Where a recorded kernel lives, so that `check` can import it: the module-level name that holds
it, the sys.path entry its module was imported from, and for a kernel generated at run time the
source of its file with the imports of what its module was handed.
"""
import os
import re
import sys


def module_source(func):
    """The source of the file that defines `func` as a module-level name, then the imports that
    give the names its module was handed at run time (flag_gems loads a generated file, then
    copies its op module's globals into it: `NameError: erf` when the file is loaded alone); ""
    when there is no file to read or it does not define the function at module level."""
    import linecache
    filename = func.__code__.co_filename
    if os.path.isfile(filename):
        try:
            with open(filename, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            return "", []
    else:
        text = "".join(linecache.getlines(filename))
    if not re.search(rf"^def {re.escape(func.__name__)}\b", text, re.M):
        return "", []
    given, roots = _imports_of_given_globals(text, func.__globals__, func.__module__)
    if given:
        # At the end: the lines of the file stay where they were, and these names are only read
        # when a kernel is compiled, after the module has run (as in the library, which also
        # ran the file before handing them over).
        text = (text.rstrip("\n") + "\n\n\n# Added by triton-portcheck capture: what this module was "
                "given at run time.\n" + "\n".join(given) + "\n")
    return text, roots


def _imports_of_given_globals(text, module_globals, module_name):
    """`from M import X as name` for each name the file reads whose value in the running module
    came from another module (handed over, or replacing the file's own definition), where M.X is
    that very object; and the sys.path entries those modules were imported from."""
    import ast
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [], []
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    imported = {(alias.asname or alias.name).split(".")[0] for node in tree.body
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    lines, homes = [], set()
    for name in sorted(read - imported):
        value = module_globals.get(name)
        if value is None:
            continue
        if isinstance(value, type(sys)):
            lines.append(f"import {value.__name__} as {name}" if value.__name__ != name
                         else f"import {name}")
            homes.add(value.__name__)
            continue
        found = _home_of(value)
        if found and found[0] != module_name:
            lines.append(f"from {found[0]} import {found[1]} as {name}")
            homes.add(found[0])
    roots = {import_root(home, getattr(sys.modules.get(home), "__file__", None) or "<none>")
             for home in homes}
    return lines, sorted(r for r in roots if r)


def _home_of(value):
    """(module, name) where `value` is a module-level attribute, found through the object itself
    or what it wraps (`.fn`: the interpreter's and the JIT's function objects, autotuners)."""
    candidate = value
    for _ in range(8):
        home, name = getattr(candidate, "__module__", None), getattr(candidate, "__qualname__", None)
        if (isinstance(home, str) and isinstance(name, str) and name.isidentifier()
                and getattr(sys.modules.get(home), name, None) is value):
            return home, name
        candidate = getattr(candidate, "fn", None)
        if candidate is None:
            return None
    return None


def kernel_attribute(func):
    """(name, None) of the module-level attribute `check` can import the kernel by: the JIT object,
    or a wrapper (autotuner, heuristics, a library's) whose `.fn` chain leads to it. Else (None,
    why not): kernels generated at run time, or defined inside a function or class."""
    if "<" in func.__qualname__ or "." in func.__qualname__:
        return None, "it is defined inside a function or class"
    module = sys.modules.get(func.__module__)
    if module is None:
        return None, "the module is not importable by name (not in sys.modules: generated at run time?)"
    names = [func.__name__] + [n for n in vars(module) if n != func.__name__]
    for name in names:
        obj = getattr(module, name, None)
        try:
            for _ in range(8):
                if obj is None or obj is func:
                    break
                if getattr(obj, "fn", None) is func:
                    return name, None
                obj = getattr(obj, "fn", None)
        except Exception:  # a module attribute whose `fn` is a property that raises
            continue
    return None, f"no module-level name of {func.__module__} holds this @triton.jit function"


def import_root(module, filename):
    """The sys.path entry `module` was imported from, or None when it cannot be imported by name."""
    if not module or module == "__main__" or "<" in filename:
        return None
    parts = module.split(".")
    path = os.path.abspath(filename)
    stem, _ = os.path.splitext(os.path.basename(path))
    folder = os.path.dirname(path)
    if stem == "__init__":
        names = parts
    else:
        if stem != parts[-1]:
            return None
        names = parts[:-1]
    for name in reversed(names):
        if os.path.basename(folder) != name:
            return None
        folder = os.path.dirname(folder)
    return folder
