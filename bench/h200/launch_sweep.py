#!/usr/bin/env python3
"""The launch-limit proof on a real GPU: matmul configurations whose needs straddle the card's limits.

    launch_sweep.py manifest OUT.toml      # the rows, with the specialisation a PyTorch launch produces
    launch_sweep.py launch OUT.json        # on the GPU: launch each through Triton, record ran / OutOfResources
    launch_sweep.py compare TOOL.json LAUNCH.json OUT.md   # agreement between the tool and the GPU

A PyTorch launch of contiguous fp16 4096x4096 matrices gives every pointer and M, N, K and the
row strides (multiples of 16) Triton's divisibility-16 attribute, and turns the unit strides into
constexpr 1: the manifest states exactly that, and `launch` records the JIT's own specialisation
so the two can be compared.
"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SIZE = 4096
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): around the H200's 232448 bytes of shared
# memory, plus register-heavy tiles (a 256x256 fp32 accumulator over 128 threads).
CONFIGS = [
    (128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (128, 256, 64, 8, 5),
    (256, 128, 64, 8, 4), (256, 128, 64, 8, 5),
    (128, 128, 64, 4, 6), (128, 128, 64, 4, 7), (128, 128, 64, 4, 8),
    (256, 256, 64, 8, 2), (256, 256, 64, 8, 3), (256, 256, 64, 8, 4),
    (128, 128, 128, 8, 4), (128, 128, 128, 8, 5),
    (256, 256, 32, 4, 2), (256, 128, 32, 4, 3),
]


def row_name(c):
    return f"mm_{c[0]}x{c[1]}x{c[2]}_w{c[3]}_s{c[4]}"


def manifest(out):
    lines = ['[defaults]', 'targets = ["cuda:90"]', 'timeout = 600', ""]
    for c in CONFIGS:
        lines += ["[[kernel]]", f'name = "{row_name(c)}"', 'target = "matmul.py:matmul"',
                  'signature = { a_ptr = "*fp16:16", b_ptr = "*fp16:16", c_ptr = "*fp16:16", M = "i32:16", '
                  'N = "i32:16", K = "i32:16", stride_am = "i32:16", stride_bk = "i32:16", stride_cm = "i32:16" }',
                  f"constants = {{ stride_ak = 1, stride_bn = 1, stride_cn = 1, BLOCK_M = {c[0]}, BLOCK_N = {c[1]}, "
                  f"BLOCK_K = {c[2]} }}",
                  f"options = {{ num_warps = {c[3]}, num_stages = {c[4]} }}", ""]
    pathlib.Path(out).write_text("\n".join(lines))


def _launch_one(c):
    import torch
    import triton
    from triton import knobs
    sys.path.insert(0, str(HERE))
    from matmul import matmul
    seen = {}

    def hook(*, key, repr, fn, compile, is_manual_warmup, already_compiled):
        seen["specialization"] = json.loads(compile["specialization_data"])
        return None

    knobs.runtime.jit_cache_hook = hook
    a = torch.randn((SIZE, SIZE), device="cuda", dtype=torch.float16)
    b = torch.randn((SIZE, SIZE), device="cuda", dtype=torch.float16)
    out = torch.empty((SIZE, SIZE), device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(SIZE, c[0]), triton.cdiv(SIZE, c[1]))
    record = {"row": row_name(c), "config": c}
    try:
        kernel = matmul[grid](a, b, out, SIZE, SIZE, SIZE, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                              out.stride(0), out.stride(1), BLOCK_M=c[0], BLOCK_N=c[1], BLOCK_K=c[2],
                              num_warps=c[3], num_stages=c[4])
        torch.cuda.synchronize()
        ref = a.float() @ b.float()
        record.update(ran=True, shared=kernel.metadata.shared, n_regs=getattr(kernel, "n_regs", None),
                      n_spills=getattr(kernel, "n_spills", None),
                      max_abs_err=float((out.float() - ref).abs().max()))
    except Exception as e:  # OutOfResources is the expected refusal; record anything else too
        record.update(ran=False, error_type=type(e).__name__, error=str(e)[:500])
    spec = seen.get("specialization", {})
    record["jit_signature"] = spec.get("signature")
    record["jit_constants"] = dict(zip(map(str, spec.get("constant_keys", [])), spec.get("constant_vals", [])))
    record["jit_attrs"] = dict(zip(map(str, spec.get("attrs_keys", [])), spec.get("attrs_vals", [])))
    return record


def launch(out):
    import concurrent.futures
    import multiprocessing
    import platform
    import torch
    import triton
    with concurrent.futures.ProcessPoolExecutor(8, mp_context=multiprocessing.get_context("spawn")) as pool:
        records = list(pool.map(_launch_one, CONFIGS))
    result = {"gpu": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
              "max_shared_optin": torch.cuda.get_device_properties(0).shared_memory_per_block_optin,
              "triton": triton.__version__, "torch": torch.__version__, "python": platform.python_version(),
              "records": records}
    pathlib.Path(out).write_text(json.dumps(result, indent=1))


def compare(tool_json, launch_json, out_md):
    tool = json.loads(pathlib.Path(tool_json).read_text())
    gpu = json.loads(pathlib.Path(launch_json).read_text())
    cells = {c["row"]: c for c in tool["cells"]}
    lines = [f"GPU: {gpu['gpu']} (capability {gpu['capability'][0]}.{gpu['capability'][1]}, "
             f"max opt-in shared memory per block {gpu['max_shared_optin']} bytes); Triton {gpu['triton']} on the GPU, "
             f"Triton {tool['environment']['triton']['version']} in the tool's run; torch {gpu['torch']}.", "",
             "| config | tool: shared (B) | tool: status | GPU: shared (B) | GPU: launch | agree |",
             "|---|---:|---|---:|---|---|"]
    agree = 0
    for r in gpu["records"]:
        cell = cells[r["row"]]
        tool_shared = cell["metadata"].get("shared") if cell["metadata"] else None
        predicts_launch = cell["status"] == "ok"
        same = predicts_launch == r["ran"]
        agree += same
        gpu_shared = r.get("shared", "")
        if not r["ran"] and "Required:" in r.get("error", ""):
            gpu_shared = r["error"].split("Required:")[1].split(",")[0].strip()
        outcome = "ran" if r["ran"] else f"{r.get('error_type')}: {r.get('error', '')[:80]}"
        lines.append(f"| {r['row']} | {tool_shared} | {cell['status']}{': ' + cell['message'] if cell['message'] else ''} "
                     f"| {gpu_shared} | {outcome} | {'yes' if same else 'NO'} |")
    total = len(gpu["records"])
    lines += ["", f"Agreement: {agree} of {total} ({100 * agree / total:.0f}%)."]
    pathlib.Path(out_md).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    {"manifest": manifest, "launch": launch, "compare": compare}[sys.argv[1]](*sys.argv[2:])
