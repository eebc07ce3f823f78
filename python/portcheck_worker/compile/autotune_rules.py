"""What the installed Triton's autotuner does with a config that fails: read from that release's
own source, never from one table for every release.

`Autotuner._bench` benchmarks each config inside `try: ... except (A, B, ...):` and gives a config
whose benchmark raises one of those the timing `inf`, so the launch goes on with the others; any
other exception reaches the user's call. Which classes are caught differs by release (3.0-3.2:
`OutOfResources` and `CompileTimeAssertionFailure`; 3.3 on adds `PTXASError`), and so do the
checks `CompiledKernel._init_handles` makes when a kernel is loaded, each raising
`OutOfResources(..., "<what>")` (3.0-3.2: "shared memory"; 3.3 adds "tensor memory", 3.4
"threads"). A launch-limit problem the release does not check at load fails the launch itself (a
driver error), which the autotuner does not catch.
"""
import ast
import functools
import importlib
import inspect
import textwrap

# Which check of `_init_handles` refuses a kernel that needs more of a launch rule's quantity
# (launch_rules.py's names) than the device allows. The loaded function's maximum threads per
# block is lowered by its registers, so a block that needs too many registers fails "threads".
# A cluster too large for the device is no load check: the launch itself fails.
LOAD_CHECK_OF_NEED = {
    "threads_per_block": "threads",
    "registers_per_block": "threads",
    "registers_per_thread": "threads",
    "shared_bytes": "shared memory",
    "tensor_memory_columns": "tensor memory",
}


def _function_tree(function):
    """The function's syntax tree; an empty module where its source cannot be read (an install
    without .py files): then nothing is known to be skipped, and each config is judged alone."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return ast.Module(body=[], type_ignores=[])


def _imported_names(tree, package):
    """{name: module} of the `from X import name` statements inside a function (3.9's _bench
    imports CompileTimeAssertionFailure there)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = importlib.import_module("." * node.level + (node.module or ""), package) if node.level \
                else importlib.import_module(node.module)
            for alias in node.names:
                names[alias.asname or alias.name] = getattr(module, alias.name, None)
    return names


def _skipping(handler):
    """A handler that gives the config a timing (returns) rather than passing the exception on:
    `_bench` also has an `except Exception:` that runs the post-hook and raises again."""
    body = [node for statement in handler.body for node in ast.walk(statement)]
    return any(isinstance(n, ast.Return) for n in body) and not any(isinstance(n, ast.Raise) for n in body)


def _handler_names(handler):
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return [k.id if isinstance(k, ast.Name) else k.attr for k in kinds if isinstance(k, (ast.Name, ast.Attribute))]


@functools.lru_cache(maxsize=None)
def skipped_exceptions():
    """The exception classes the installed autotuner's `_bench` catches (a config raising one is
    given no timing and left out of the launch)."""
    from triton.runtime import autotuner
    tree = _function_tree(autotuner.Autotuner._bench)
    local = _imported_names(tree, autotuner.__package__)
    classes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None and _skipping(node):
            for name in _handler_names(node):
                cls = local.get(name) or getattr(autotuner, name, None)
                if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in classes:
                    classes.append(cls)
    return tuple(classes)


@functools.lru_cache(maxsize=None)
def load_checks():
    """What `CompiledKernel._init_handles` refuses with OutOfResources: {"shared memory", ...}."""
    from triton.compiler.compiler import CompiledKernel
    checks = set()
    for node in ast.walk(_function_tree(CompiledKernel._init_handles)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "OutOfResources":
            words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            checks.update(words)
    return frozenset(checks)


def _skips(name):
    return any(cls.__name__ == name for cls in skipped_exceptions())


def failure_answer(exception):
    """{"skips", "raises"} for a config whose compile raised `exception`: whether the autotuner
    catches it and goes on with the other configs."""
    return {"skips": isinstance(exception, skipped_exceptions()), "raises": type(exception).__name__}


def launch_answer(exceeded):
    """{"skips", "raises"} for a compiled config that needs more than its target allows
    (`exceeded`: launch_rules' names of what it needs too much of). OutOfResources when the
    release checks every one of them as it loads the kernel; else the launch fails in the
    driver, which nothing catches."""
    checks = load_checks()
    if exceeded and all(LOAD_CHECK_OF_NEED.get(need) in checks for need in exceeded):
        return {"skips": _skips("OutOfResources"), "raises": "OutOfResources"}
    # The launcher's failed launch: "Triton Error [CUDA]: ..." (or [HIP]) as a RuntimeError.
    return {"skips": False, "raises": "RuntimeError"}
