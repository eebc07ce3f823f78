"""A `repro` request: the reproducer of one cell, as text in the result (the tool writes the
file). Runs as a cell, under the row's limits: the user's module is imported here."""
from . import inline, script, shrink
from ..compile import driver, loader, releases, stages


def reproducer(request, progress):
    """`request`: a messages.ReproRequest."""
    facts = request.repro
    releases.current().prepare()
    target = stages.make_target(request.target)
    driver.install(target)  # module-level target_info guards see the cell's target
    progress.mark("import")
    fn = loader.load_kernel(request.kernel)
    spec = stages.specialisation(fn, request)
    import triton
    written = script.Written(triton.__version__, _where(fn, request.row_name))
    functions = [v for v in spec.constexprs.values() if type(v).__name__ == "JITFunction"]
    reached = inline.collect(fn, functions)
    shrunk = None
    if facts.shrink_s and not reached.blockers:
        progress.mark("shrink")
        shrunk = shrink.shrink(fn, spec, request, reached, float(facts.shrink_s))
        fn, spec, reached = shrunk.fn, shrunk.spec, shrunk.reached
        written.shrunk = shrunk.figures()
    try:
        text, imported = script.render(fn, request, spec, written, reached)
    except script.Unwritable as e:
        return {"status": "ok", "repro": {"error": str(e)}}
    return {"status": "ok", "repro": {
        "text": text, "lines": text.count("\n"), "imports_module": imported, "blockers": reached.blockers,
        "shrink": shrunk.figures() if shrunk else None}}


def _where(fn, row):
    """For the header (a comment, escaped): the kernel's name, where it is defined, the row."""
    name = inline.shown_name(getattr(fn, "__name__", None))
    location = stages.source_location(fn)
    if location is None:
        return f"{name} (row {row})"
    return f"{name}, {location['file']}:{location['line']} (row {row})"
