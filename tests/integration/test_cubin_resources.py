"""Resource counts read from the cubin's ELF tables (python/portcheck_worker/compile/cubin.py) equal what
`cuobjdump -res-usage` prints for the same cubin: real kernels, compiled by the real Triton for
several architectures, and with a register cap low enough to make them spill to the stack."""
import json
import subprocess

import pytest

from conftest import REPO, WORKER_DIR

pytestmark = pytest.mark.slow

COMPARE = r'''
import json, re, subprocess, sys, tempfile
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from portcheck_worker.base.frozen_json import convert
from portcheck_worker.base.messages import CompileRequest, KernelRef
from portcheck_worker.compile import cubin, driver, loader, stages
rows = [("axpy", {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32", "a": "fp32"},
         {"BLOCK": 1024}),
        ("dot_small", {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16", "stride_am": "i32:16",
                       "stride_bk": "i32:16", "stride_cm": "i32:16"}, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}),
        ("gamma_ratio", {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16"},
         {"BLOCK": 1024})]
out = []
for arch in (75, 90, 120):
    for name, signature, constants in rows:
        for maxnreg in (None, 24):
            target = GPUTarget("cuda", arch, 32)
            driver.install(target)
            fn = loader.load_kernel(convert(KernelRef, {"file": sys.argv[2] + "/kernels.py", "function": name}))
            request = {"signature": signature, "constants": constants,
                       "target": {"backend": "cuda", "arch": arch, "warp_size": 32}}
            src, options = stages.build_source(fn, convert(CompileRequest, request))
            if maxnreg:
                options["maxnreg"] = maxnreg
            try:
                compiled = triton.compile(src, target=target, options=options)
            except Exception:  # ptxas may refuse a cap for some kernel and architecture
                continue
            with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                f.write(compiled.asm["cubin"])
                f.flush()
                text = subprocess.run([knobs.nvidia.cuobjdump.path, "-res-usage", f.name], capture_output=True,
                                      text=True, check=True).stdout
            fields = dict(re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", text))
            out.append({"case": f"{name} sm_{arch} maxnreg={maxnreg}",
                        "cuobjdump": {"registers": int(fields["REG"]), "stack_bytes": int(fields["STACK"]),
                                      "local_bytes": int(fields["LOCAL"]),
                                      "static_shared_bytes": int(fields["SHARED"])},
                        "elf": cubin.resources(compiled.asm["cubin"], compiled.metadata.name)})
print(json.dumps(out))
'''


def test_the_cubin_tables_agree_with_cuobjdump(venv_python):
    run = subprocess.run([str(venv_python), "-c", COMPARE, str(WORKER_DIR), str(REPO / "demo")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    cases = json.loads(run.stdout.splitlines()[-1])  # Triton may print before it
    assert len(cases) >= 14, [c["case"] for c in cases]
    assert any(c["cuobjdump"]["stack_bytes"] > 0 for c in cases), "no case spilled: the cap is too loose"
    assert any(c["cuobjdump"]["static_shared_bytes"] > 0 for c in cases)
    for case in cases:
        assert case["elf"] == case["cuobjdump"], case


def test_a_file_that_is_not_a_cubin_is_unreadable_not_an_error(venv_python):
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from portcheck_worker.compile import cubin\n"
             "for data in (b'', b'not an elf', b'\\x7fELF\\x02' + bytes(60)):\n"
             "    try:\n        cubin.resources(data, 'k')\n    except cubin.Unreadable as e:\n        print('unreadable')\n")
    run = subprocess.run([str(venv_python), "-c", probe, str(WORKER_DIR)], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ["unreadable"] * 3, run.stdout + run.stderr
