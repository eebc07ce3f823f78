"""The text of a reproducer: a header saying what failed where, the kernel and what it reaches
(inline.py), the cell's exact specialisation, and the compile harness every release from 3.0
runs (compile/portable.py), all in one file that needs nothing but Triton.
"""
import json
import math
import os
import pprint
import re
import sys

from . import inline, outcome
from ..base.frozen_json import as_json
from ..compile import cubin, launch_rules, portable

RULE = "# " + "-" * 96
# Line 2 of the file, fixed: Python reads an encoding declaration (PEP 263) only on line 1 or 2,
# so no text of the cell's (a row named "k[coding=raw_unicode_escape]", say) can be one, and the
# kernel's source is read as the UTF-8 it was written in.
CODING = "# -*- coding: utf-8 -*-"
# Names the harness and the cell section define: a kernel's helper of the same name would be
# replaced by them, so such a kernel is imported from its module instead.
HARNESS_NAMES = {"KERNEL", "CELL", "RECORDED", "triton", "sys"}
# The modules a reproducer carries, in the order their code is written into it.
HARNESS_MODULES = (portable, launch_rules, cubin, outcome)


def harness_text():
    """compile/portable.py, compile/launch_rules.py, compile/cubin.py and repro/outcome.py as a
    reproducer carries them: their code without the module docstrings, their standard-library
    imports gathered for the top of the file (the names outcome.py imports from the others are
    defined above it in the file)."""
    imports, bodies = set(), []
    for module in HARNESS_MODULES:
        with open(module.__file__) as f:
            text = f.read()
        lines = text[text.index('"""', 3) + 3:].lstrip("\n").splitlines(keepends=True)
        imports |= {line for line in lines if re.match(r"(import|from) \w", line)}
        bodies.append("".join(line for line in lines if not re.match(r"(import|from) [\w.]", line)).strip("\n"))
    return "".join(sorted(imports)), "\n\n\n".join(bodies) + "\n"


def harness_names():
    return set(re.findall(r"^(?:def|class) (\w+)", harness_text()[1], re.MULTILINE)) | HARNESS_NAMES


def comment(text, width=100):
    """`text` as comment lines, every character a reader's terminal shows as it is."""
    out = []
    for line in str(text).splitlines() or [""]:
        shown = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in line)
        out.append(("# " + shown).rstrip())
    return "\n".join(out)


def one_line(text):
    """A value shown on one header line: a newline in it cannot start a line of its own."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


class Written:
    """What the worker adds to the tool's facts (a ReproFacts) of the cell: the Triton it ran,
    where the kernel is defined (`source`), and --shrink's figures when it shrank the kernel."""

    def __init__(self, triton_version, source, shrunk=None):
        self.triton_version, self.source, self.shrunk = triton_version, source, shrunk


def header(facts, written, imports_module=None):
    """Who wrote the file, from which cell (`facts`, a ReproFacts; `written`, a Written), and what
    that cell said; `imports_module`: why the kernel is imported rather than copied in (what could
    not be copied)."""
    failure = f"{facts.kind or 'failure'} in stage {facts.stage}"
    if facts.pass_:
        failure += f", pass {facts.pass_}"
    lines = [
        f"Reproducer: {one_line(facts.kernel)} on {one_line(facts.target)} with Triton "
        f"{one_line(written.triton_version)}.",
        f"Written by {one_line(facts.tool)}: {one_line(facts.command)}",
        "",
        f"failure:      {one_line(failure)} (fingerprint {one_line(facts.fingerprint)})",
        f"kernel:       {one_line(written.source)}",
        f"target:       {one_line(facts.target)} (no GPU needed: a stand-in driver answers for it)",
    ]
    if imports_module:
        lines.append("copied:       not all of it; the file imports the kernel's module, which must be importable:")
        lines += [f"                {one_line(b)}" for b in imports_module]
    if written.shrunk:
        lines.append(f"shrunk:       by --shrink, the kernel's code from {written.shrunk['before_lines']} to "
                     f"{written.shrunk['after_lines']} lines (block sizes may be smaller than the cell's)")
    if facts.time_limit_s:
        lines.append(f"time limit:   {facts.time_limit_s:g} s: the compile had not finished then")
    if facts.max_rss_bytes:
        lines.append(f"memory limit: {outcome.size_text(facts.max_rss_bytes)} for the compile's processes together "
                     "(their resident memory, as triton-portcheck")
        lines.append("              measures it): the compile exceeded it. This file stops its compile there too.")
    for problem in facts.launch.problems if facts.launch else ():
        lines.append(f"launch limit: {problem}")
    lines += ["message:"] + ["    " + m for m in str(facts.message).splitlines()]
    lines += ["", ("Run it where only Triton is installed" if not imports_module else
                   "Run it where Triton is installed and the kernel's module imports") +
              ": `python THIS_FILE`. It prints the stage and the",
              "compiler's message and exits 1 while the failure reproduces; it exits 0 and says",
              "\"no longer reproduces\" once the kernel compiles (after an upgrade, say)."]
    machine = json.dumps({"fingerprint": facts.fingerprint, "kind": facts.kind, "stage": facts.stage,
                          "target": facts.target, "triton_version": written.triton_version,
                          "time_limit_s": facts.time_limit_s, "max_rss_bytes": facts.max_rss_bytes}, sort_keys=True)
    return comment("\n".join(lines)) + "\n# portcheck-repro: " + machine + "\n"


def cell_section(spec, target, names_of):
    """The specialisation the cell compiled, as Python literals; `target`: a messages.Target."""
    constexprs = {key: _value(value, names_of) for key, value in spec.constexprs.items()}
    cell = {
        "target": (target.backend, int(target.arch) if target.backend == "cuda" else target.arch,
                   int(target.warp_size)),
        "signature": spec.signature,
        "constexprs": PLACEHOLDER,
        "attrs": {k: [list(a) for a in v] for k, v in spec.attrs.items()},
        "options": spec.options,
    }
    text = plain_text(cell, "the cell's specialisation")
    inner = "{" + ", ".join(f"{plain_text(k, 'a constant key')}: {v}" for k, v in constexprs.items()) + "}"
    if text.count(repr(PLACEHOLDER)) != 1:
        raise Unwritable("the cell's specialisation holds the text that marks its constants")
    return f"CELL = {text.replace(repr(PLACEHOLDER), inner)}\n"


PLACEHOLDER = "@@CONSTEXPRS@@"


class Unwritable(Exception):
    """A constant of the row that no Python literal gives back."""


def plain(value, depth=0):
    """Whether `value` is made only of exact builtin types that pprint writes as literals: None,
    bools, ints, finite floats, strings, and tuples, lists and dicts of those."""
    kind = type(value)
    if value is None or kind in (bool, int, str) or (kind is float and math.isfinite(value)):
        return True
    if depth >= inline.MAX_DEPTH:
        return False
    if kind in (tuple, list):
        return all(plain(v, depth + 1) for v in value)
    return kind is dict and all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())


def plain_text(value, what, sort_dicts=False):
    """pprint's text of a plain value (plain()); Unwritable otherwise."""
    if not plain(value):
        raise Unwritable(f"{what} is not made of plain Python literals")
    return pprint.pformat(value, width=96, sort_dicts=sort_dicts)


def _value(value, names_of):
    import triton.language as tl
    from triton.runtime.jit import JITFunction
    if names_of.get(id(value)) is not None:
        return names_of[id(value)]
    if isinstance(value, JITFunction):  # imported from its module (fallback)
        return _imported_function(value)
    if type(value) is tl.constexpr:
        inner = inline.literal(value.value)
        if inner is not None:
            return f"triton.language.constexpr({inner})"
    text = inline.literal(value)
    if text is None:
        raise Unwritable(f"a constant of the row (a {type(value).__name__}) has no Python literal")
    return text


def _imported_function(value):
    """`getattr(importlib.import_module('m'), 'f')` for a @triton.jit function its module holds
    under that name; Unwritable otherwise."""
    module, name = getattr(value.fn, "__module__", None), getattr(value.fn, "__name__", None)
    if not (inline.dotted_name(module) and inline.identifier(name)
            and getattr(sys.modules.get(module), name, None) is value):
        raise Unwritable("a @triton.jit constant of the row is not what its module holds under its name")
    return f"getattr(importlib.import_module({str.__repr__(module)}), {str.__repr__(name)})"


def fallback_import(ref, target):
    """Imports the kernel from its module, from the folders the check imported it from, with the
    stand-in driver answering for the target (module-level target_info guards see it)."""
    def text(value):
        return plain_text(value, "the kernel's module reference")

    lines = [RULE, comment("The kernel's module, imported (what could not be copied: the header says).")]
    lines.append("from triton.runtime import driver as _driver\n"
                 f"_driver.set_active(StandInDriver(gpu_target({text(target.backend)}, {text(str(target.arch))}, "
                 f"{int(target.warp_size)})))")
    folders = [f for f in [ref.import_root, *(ref.pythonpath or ())] if f]
    lines.append("import importlib\nimport importlib.util")
    lines.append(f"sys.path[:0] = {text(folders)}")
    if ref.file:
        path = text(os.path.abspath(ref.file))
        lines.append(f"_spec = importlib.util.spec_from_file_location('kernel_module', {path})")
        lines.append("_module = importlib.util.module_from_spec(_spec)\n_spec.loader.exec_module(_module)")
    else:
        lines.append(f"_module = importlib.import_module({text(ref.module)})")
    lines.append(f"KERNEL = getattr(_module, {text(ref.function)})")
    lines.append("while not hasattr(KERNEL, 'arg_names'):  # @triton.autotune and @triton.heuristics wrap it\n"
                 "    KERNEL = KERNEL.fn")
    return "\n".join(lines) + "\n"


def render(fn, request, spec, written, reached):
    """The whole file of a ReproRequest's cell (`written`: a Written)."""
    facts = request.repro
    harness_imports, harness = harness_text()
    clash = sorted(set(reached.bound()) & harness_names() - {"triton", "sys"})
    blockers = reached.blockers + [f"{n}: a name the reproducer's own code uses" for n in clash]
    names_of = {} if blockers else reached.names_of
    recorded = {"stage": facts.stage, "kind": facts.kind, "fingerprint": facts.fingerprint, "message": facts.message,
                "time_limit_s": facts.time_limit_s, "max_rss_bytes": facts.max_rss_bytes,
                # As the JSON has them: the harness's launch_rules.py reads them so.
                "launch_limits": as_json(facts.launch.limits) if facts.launch else None}
    shrunk = " (made smaller by --shrink)." if written.shrunk else ", exactly."
    cell = "\n".join([RULE, comment("The cell: what triton-portcheck compiled" + shrunk),
                      ("" if blockers else f"KERNEL = {names_of[id(fn)]}\n") +
                      cell_section(spec, request.target, names_of),
                      "RECORDED = " + plain_text(recorded, "what the cell recorded", sort_dicts=True) + "\n"])
    harness = "\n".join([RULE, comment("Compiling without a GPU, the same way for every Triton from 3.0 "
                                       "(from triton-portcheck)."), harness])
    # Copied, the kernel comes first; imported, it comes after the harness, once the stand-in
    # driver answers for the target, and the cell after it (its constants may name its functions).
    body = [copied_code(reached), cell, harness] if not blockers else [
        harness, fallback_import(request.kernel, request.target), cell]
    return "\n".join([
        "#!/usr/bin/env python3\n" + CODING, header(facts, written, blockers), harness_imports + "\nimport triton\n", *body,
        "\nif __name__ == \"__main__\":\n    sys.exit(reproduce(KERNEL, CELL, RECORDED, sys.argv[1:]))\n",
    ]), bool(blockers)


def copied_code(reached):
    """Imports, constants, then functions (the kernel last), each as its module had it."""
    imports = "".join(d.text for d in sorted(reached.imports.values(), key=lambda d: d.text))
    values = "".join(d.text for d in reached.values.values() if not d.uses)
    aliases = "".join(d.text for d in reached.values.values() if d.uses)  # another name for a function
    functions = list(reached.functions.values())
    functions = functions[1:] + functions[:1]  # helpers first, then the kernel
    parts = [imports, values] + [f"\n{d.text}" for d in functions] + [aliases]
    return "\n".join(p for p in parts if p)
