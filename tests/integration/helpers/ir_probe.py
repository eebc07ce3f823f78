"""Compiles one manifest-style request the way portcheck_worker does and reports what its IR calls.

The tool does not save IR, so this script reuses the worker's own pieces (the stand-in driver,
the loader and stages.build_source) and then looks into `compiled.asm`.

usage: python ir_probe.py REQUEST.json [--no-driver]
prints one JSON object: {"ok": true, "symbols": {"ttir": [...], "ttgir": [...], "llir": [...]}}
                    or  {"ok": false, "error": "Type: message"}
Set TRITON_CACHE_DIR to a fresh folder: a cached kernel would hide which branch the trace took.
"""
import json
import re
import sys


def main(argv):
    request = json.load(open(argv[0]))
    use_driver = "--no-driver" not in argv
    from portcheck_worker.base.frozen_json import convert
    from portcheck_worker.base.messages import CompileRequest
    from portcheck_worker.compile import driver, loader, stages
    import triton
    from triton import knobs
    knobs.compilation.always_compile = True  # never serve a kernel traced under another driver
    # A manifest-style request of the tests' making: converted as a message is, not checked.
    request = convert(CompileRequest, request)
    target = stages.make_target(request.target)
    if use_driver:
        driver.install(target)
    fn = loader.load_kernel(request.kernel)
    src, options = stages.build_source(fn, request)
    try:
        compiled = triton.compile(src, target=target, options=options)
    except Exception as e:  # report, do not crash: the test asserts on it
        text = str(e)
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {text[-2000:]}"}))
        return 0
    pattern = re.compile(r"@?(__[A-Za-z0-9_]*(?:gamma)[A-Za-z0-9_]*)")
    symbols = {k: sorted(set(pattern.findall(compiled.asm[k]))) for k in ("ttir", "ttgir", "llir")}
    print(json.dumps({"ok": True, "symbols": symbols, "target": vars(compiled.metadata.target)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
