"""Run by a Triton release's own python (PYTHONPATH: the worker): launches one kernel the ways the
JIT specialises differently, takes what the JIT hands its cache hook, and prints JSON:

- `jit`: the hash of the ASTSource the JIT itself builds from that (its own line in each release),
- `ours`: the hash of the ASTSource the worker compiles from the same launch's serialised
  specialisation, through the release adapter's common form (what `capture` records),
- `row`: the hash of the ASTSource the worker compiles from the manifest row written for it,
- `common`: the common form itself,
- `interpreter_entry`: whether `kernel[grid](...)` under the interpreter goes through the class's
  `run`, once capture has unified it (what the recorder wraps).

Equal hashes are the same specialisation: signature, constants and attributes.
"""
import json
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from portcheck_worker.base.frozen_json import convert
from portcheck_worker.base.messages import CompileRequest, Target
from portcheck_worker.compile import driver, releases, stages

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "releases"))
from launch_fakes import FakeTensor, scale as kernel  # noqa: E402  (the kernel capture's test launches)


@triton.jit(do_not_specialize=["n"])
def kept(x_ptr, n, ONE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * ONE, mask=offs < n)


# (kernel, launch arguments, the manifest row a capture writes for them)
LAUNCHES = [
    (kernel, (FakeTensor(1 << 20), FakeTensor(1 << 21), 1024, 1, None, 0.5),
     {"signature": {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16", "alpha": "fp32"},
      "constants": {"stride": 1, "bias_ptr": {"none": True}, "BLOCK": 256}}),
    (kernel, (FakeTensor(1 << 20), FakeTensor((1 << 21) + 4, "torch.float16"), 1000, 3, FakeTensor(4096), 2.0),
     {"signature": {"x_ptr": "*fp32:16", "out_ptr": "*fp16", "n": "i32", "stride": "i32", "bias_ptr": "*fp32:16",
                    "alpha": "fp32"},
      "constants": {"BLOCK": 256}}),
    # A constexpr equal to 1, an integer divisible by 16 the JIT must not specialise.
    (kept, (FakeTensor(1 << 20), 64, 1), {"signature": {"x_ptr": "*fp32:16", "n": "i32"}, "constants": {"ONE": 1}}),
]
TARGET = {"backend": sys.argv[1], "arch": sys.argv[2], "warp_size": int(sys.argv[3])}


def main():
    release = releases.current()
    target = stages.make_target(convert(Target, TARGET))
    driver.install(GPUTarget(target.backend, target.arch, target.warp_size))
    seen = []

    def hook(**kwargs):
        seen.append(kwargs["compile"])
        return True  # recorded, never compiled: no GPU here

    release.set_jit_cache_hook(hook)
    out = []
    for fn, args, row in LAUNCHES:
        seen.clear()
        fn[(1, )](*args, BLOCK=256)
        (jit, ) = seen
        # The JIT's own next line, in every release from 3.0 to 3.9.
        jit_src = ASTSource(fn, jit["signature"], jit["constants"], jit["configs"][0])
        common = release.specialisation(fn, json.loads(jit["specialization_data"]))
        ours, _ = stages.build_source(fn, convert(CompileRequest, {"specialization": common, "target": TARGET}))
        row_request = {**row, "target": TARGET, "constants": {**row["constants"], "BLOCK": 256}}
        from_row, _ = stages.build_source(fn, convert(CompileRequest, row_request))
        out.append({"jit": jit_src.hash(), "ours": ours.hash(), "row": from_row.hash(), "common": common})
    print(json.dumps({"family": release.family, "launches": out, "interpreter_entry": interpreter_entry(release)},
                     default=str))


def interpreter_entry(release):
    from triton.runtime import interpreter
    cls = interpreter.InterpretedFunction
    release.unify_interpreter(cls)
    original, grids = cls.run, []
    cls.run = lambda self, *args, grid, warmup=False, **kwargs: grids.append(grid)
    try:
        interpreter.InterpretedFunction(kernel.fn)[(2, )](*LAUNCHES[0][1], BLOCK=256)
    finally:
        cls.run = original
    return grids == [(2, )]


main()
