"""Issue 42, item 6: a reproducer is run by strangers with `python FILE`, so what the kernel's module
holds may reach the file only as the module's own source text, plain literals of exact builtin
types, identifiers and imports checked against the modules they name. Each row below hides code in
a place the writer used to copy as text (a str or float subclass's __repr__, a module's and a
function's __name__, a kernel renamed after decoration, a variant whose name made line 2 of the file
an encoding declaration): writing, checking and running the file must not run it, and the file's
AST holds no call outside the tool's harness that the kernel module's source does not hold."""
import ast
import concurrent.futures
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from conftest import WORKER_DIR, run_tool

pytestmark = [pytest.mark.slow]

HOSTILE = r'''import math
import sys
import types

import triton
import triton.language as tl

MARKER = {marker!r}
RUN = f"__import__('pathlib').Path({{MARKER!r}}).touch()"


class Label(str):

    def __repr__(self):
        return f"'label'; {{RUN}}"


class Scale(float):

    def __repr__(self):
        return f"2.0); {{RUN}}; (0"  # inside triton.language.constexpr(...)


LABEL = Label("label")
SCALE = tl.constexpr(Scale(2.0))
helpers = types.ModuleType(f"triton.language\n{{RUN}}\nimport triton.language")


def _pick(x):
    return x


_pick.__module__ = "math"
_pick.__name__ = f"floor\n{{RUN}}\nfrom math import floor"
setattr(math, _pick.__name__, _pick)
PICK = _pick


@triton.jit
def str_subclass(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")
    tl.store(x_ptr, LABEL)


@triton.jit
def float_subclass(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")
    tl.store(x_ptr, tl.load(x_ptr) * SCALE)


@triton.jit
def module_name(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")
    tl.store(x_ptr, helpers.full((1, ), 0, tl.float32))


@triton.jit
def function_name(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")
    tl.store(x_ptr, PICK)


@triton.jit
def renamed(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")


renamed.fn.__name__ = f"renamed\n{{RUN}}\nrenamed"


@triton.constexpr_function
def half(n):
    return n // 2


half._src = f"def half(n):\n    {{RUN}}\n    return n // 2\n"


@triton.jit
def constexpr_src(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(half(BLOCK) < 0, "a failing cell")


_blank = types.ModuleType("this")
_blank.WIDTH = tl.constexpr(4)
sys.modules["this"] = _blank
import this as config  # noqa: E402  (the blank module: the standard library's `this` prints at import)


@triton.jit
def blank_stdlib(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")
    tl.store(x_ptr, config.WIDTH)


@triton.jit
def commented(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "a failing cell")  # \u000a__import__('pathlib').Path({marker!r}).touch()
'''

ROW = 'name = "{name}"\ntarget = "hostile.py:{name}"\nsignature = {{ x_ptr = "*fp32:16" }}\n'
MANIFEST = "".join(f"[[kernel]]\n{ROW.format(name=n)}constants = {{ BLOCK = 64 }}\n\n"
                   for n in ("str_subclass", "float_subclass", "module_name", "function_name", "renamed",
                             "constexpr_src", "blank_stdlib"))
# A variant name may hold '=': on line 2 of the file, "coding=raw_unicode_escape" was PEP 263's
# encoding declaration, which turns the \u000a in the kernel's comment into a line of code.
MANIFEST += (f"[[kernel]]\n{ROW.format(name='commented')}"
             '  [[kernel.variant]]\n  name = "coding=raw_unicode_escape"\n  constants = { BLOCK = 64 }\n')

# Rows whose file must import the kernel's module (and say why): what they reach has no safe text.
IMPORTED = {"str_subclass": "LABEL", "float_subclass": "SCALE", "module_name": "helpers", "function_name": "PICK",
            "blank_stdlib": "config"}

# Calls the tool writes outside its harness: the cell's constants, the decorator, the import of the
# kernel's module, the entry point. Anything else must be a call of the kernel module's source.
TOOL_CALLS = {"triton.language.constexpr", "triton.language.dtype", "float", "triton.jit", "getattr", "hasattr",
              "importlib.import_module", "importlib.util.spec_from_file_location",
              "importlib.util.module_from_spec", "_spec.loader.exec_module", "_driver.set_active",
              "StandInDriver", "gpu_target", "sys.exit", "reproduce"}


def harness_definitions():
    """The top-level functions and classes of the harness a reproducer carries, by name."""
    found = {}
    sys.path.insert(0, str(WORKER_DIR))
    from portcheck_worker.repro import script
    for module in script.HARNESS_MODULES:
        tree = ast.parse(Path(module.__file__).read_text())
        found.update({n.name: ast.dump(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))})
    return found


def calls(tree):
    return {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call)}


def foreign_calls(file, module_source):
    """The calls of `file`, read as Python reads it (its encoding declaration honoured), that are
    neither the harness's, the tool's own constructors, nor calls of the module's source."""
    tree = ast.parse(file.read_bytes())
    harness = harness_definitions()
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and harness.get(node.name) == ast.dump(node):
            continue
        found |= {ast.unparse(n) for n in ast.walk(node)
                  if isinstance(n, ast.Call) and ast.unparse(n.func) not in TOOL_CALLS}
    return found - calls(ast.parse(module_source))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    marker = folder / "MARKER-code-of-the-module-ran"
    (folder / "hostile.py").write_text(HOSTILE.format(marker=str(marker)))
    (folder / "portcheck.toml").write_text(MANIFEST)
    return folder, marker


# Issue 50: constexpr_src's constexpr_function carries other text in its `_src` (its code object
# is what runs); blank_stdlib's module registers a blank module as the standard library's `this`.
@pytest.mark.parametrize("row", ["str_subclass", "float_subclass", "module_name", "function_name", "renamed",
                                 "constexpr_src", "blank_stdlib", "commented[coding=raw_unicode_escape]"])
def test_nothing_of_the_kernels_module_becomes_code_in_the_reproducer(hostile, venv_python, row):
    folder, marker = hostile
    marker.unlink(missing_ok=True)
    out = folder / f"repro_{re.sub(r'[^A-Za-z0-9]+', '_', row)}.py"
    wrote = run_tool(["repro", row, "-t", "cuda:90", "--python", venv_python, "-o", out], cwd=folder)
    assert not marker.exists(), f"writing or checking the reproducer of {row} ran the module's text as code"
    assert wrote.returncode == 0 and "reproduces" in wrote.stdout, wrote.stdout + wrote.stderr
    with open(out, "rb") as f:
        assert tokenize.detect_encoding(f.readline)[0] == "utf-8"
    empty = folder / f"empty-{out.stem}"
    empty.mkdir()
    ran = subprocess.run([str(venv_python), str(out)], cwd=empty, capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    assert not marker.exists(), f"python {out.name} ran the module's text as code"
    assert ran.returncode == 1 and ran.stdout.startswith("reproduces: "), ran.stdout + ran.stderr
    assert foreign_calls(out, (folder / "hostile.py").read_text()) == set()
    head = out.read_text().split("\n\n", 1)[0]
    kernel = row.split("[")[0]
    if kernel in IMPORTED:  # said at the top, with the name that could not be copied
        assert "copied:       not all of it; the file imports the kernel's module" in head, head
        assert f"#                 {IMPORTED[kernel]}: " in head, head
    else:
        assert "importlib" not in out.read_text() and f"\ndef {kernel}(" in out.read_text()
