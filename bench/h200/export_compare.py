#!/usr/bin/env python3
"""The export proof on a real GPU, Triton's side: run the same kernels through Triton's own launch
on the inputs the exported C++ launcher used (export_example --dump DIR), compare the outputs,
and time 10,000 launches through Triton's Python launch for the host cost per launch.

    export_compare.py DUMP_DIR [N]
"""
import json
import pathlib
import sys
import time

import numpy as np
import torch
import triton

HERE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "export"
sys.path.insert(0, str(HERE))
from kernels import axpy, dequant_matvec_4bit  # noqa: E402


def main(dump, iterations=10000):
    dump = pathlib.Path(dump)
    sizes = dict(line.split() for line in (dump / "sizes.txt").read_text().splitlines())
    n, a = int(sizes["axpy_n"]), float(sizes["axpy_a"])
    N, K, group = int(sizes["matvec_N"]), int(sizes["matvec_K"]), int(sizes["group_size"])
    load = lambda name, dtype: torch.from_numpy(np.fromfile(dump / name, dtype=dtype)).cuda()  # noqa: E731
    x, y, exported_out = load("axpy_x.f32", np.float32), load("axpy_y.f32", np.float32), load("axpy_out.f32", np.float32)
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024), )
    axpy[grid](x, y, out, n, a, BLOCK=1024, num_warps=4)
    q = load("matvec_qweight.u32", np.uint32).view(torch.int32)
    scales, zeros = load("matvec_scales.f16", np.float16), load("matvec_zeros.f16", np.float16)
    xh, exported_y = load("matvec_x.f16", np.float16), load("matvec_y.f16", np.float16)
    yh = torch.empty(N, dtype=torch.float16, device="cuda")
    matvec_grid = (N, )
    dequant_matvec_4bit[matvec_grid](q, scales, zeros, xh, yh, N, K, GROUP_SIZE=group, BLOCK_SIZE=1024, num_warps=4)
    torch.cuda.synchronize()
    # CPU reference of the matvec in float64
    words = q.cpu().numpy().view(np.uint32).reshape(N, K // 8).astype(np.uint64)
    shifts = (4 * (np.arange(K) % 8)).astype(np.uint64)
    qs = (words[:, np.arange(K) // 8] >> shifts) & 0xF
    g = np.arange(K) // group
    w = (qs - zeros.cpu().numpy().astype(np.float64).reshape(N, -1)[:, g]) * \
        scales.cpu().numpy().astype(np.float64).reshape(N, -1)[:, g]
    ref = w @ xh.cpu().numpy().astype(np.float64)
    ref_axpy = a * x.cpu().double() + y.cpu().double()
    result = {
        "gpu": torch.cuda.get_device_name(0), "triton": triton.__version__, "torch": torch.__version__,
        "axpy": {"exported_vs_triton_max_abs": float((exported_out - out).abs().max()),
                 "triton_vs_cpu_max_abs": float((out.cpu().double() - ref_axpy).abs().max()),
                 "exported_vs_cpu_max_abs": float((exported_out.cpu().double() - ref_axpy).abs().max())},
        "matvec": {"exported_vs_triton_max_abs": float((exported_y.float() - yh.float()).abs().max()),
                   "triton_vs_cpu_max_abs": float(np.abs(yh.cpu().numpy().astype(np.float64) - ref).max()),
                   "exported_vs_cpu_max_abs": float(np.abs(exported_y.cpu().numpy().astype(np.float64) - ref).max())},
    }
    for name, launch in (("axpy", lambda: axpy[grid](x, y, out, n, a, BLOCK=1024, num_warps=4)),
                         ("dequant_matvec_4bit", lambda: dequant_matvec_4bit[matvec_grid](
                             q, scales, zeros, xh, yh, N, K, GROUP_SIZE=group, BLOCK_SIZE=1024, num_warps=4))):
        launch()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iterations):
            launch()
        loop = time.perf_counter() - start
        torch.cuda.synchronize()
        total = time.perf_counter() - start
        result[f"triton_launch_{name}"] = {"launches": iterations, "host_us_per_launch": loop / iterations * 1e6,
                                           "us_per_launch_with_sync": total / iterations * 1e6}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], *(int(v) for v in sys.argv[2:3]))
