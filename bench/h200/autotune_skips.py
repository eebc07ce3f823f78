"""Autotuned kernels whose configs Triton's own autotuner skips on an H100/H200 (cuda:90), each
for another reason it catches: a tile needing more shared memory than the GPU has (OutOfResources
as the kernel loads), a block of 2,048 threads (OutOfResources: threads), and a
tl.static_assert that fails for one config (CompileTimeAssertionFailure). One kernel has no
config that fits: the autotuner has nothing left and the launch raises. Run under `capture --mode
live` with TRITON_PRINT_AUTOTUNING=1 (bench/h200/autotune_fla.sh): the log is the reference of
what the autotuner skipped, which `check -t cuda:90` must call skipped, and nothing else."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=3),
                          triton.Config({"BM": 256, "BN": 256, "BK": 128}, num_warps=8, num_stages=4)],
                 key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The 256x256x128 tile in four stages needs far more than the 232,448 bytes of shared memory
    a cuda:90 block may have."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    matmul_kernel[lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))](a, b, c, M, N, K)
    return c


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4),
                          triton.Config({"BLOCK": 4096}, num_warps=64)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """64 warps are 2,048 threads: more than a block may have on any NVIDIA GPU."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3, mask=mask)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, out, n)
    return out


@triton.autotune(configs=[triton.Config({"BLOCK": 512}, num_warps=4),
                          triton.Config({"BLOCK": 8192}, num_warps=4)], key=["n"])
@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The library's own limit on the block, as a compile-time assertion."""
    tl.static_assert(BLOCK <= 4096, "a block holds at most 4096 elements")
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def shift(x):
    out = torch.empty_like(x)
    n = x.numel()
    shift_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, out, n)
    return out


@triton.autotune(configs=[triton.Config({"BLOCK": 2048}, num_warps=64),
                          triton.Config({"BLOCK": 4096}, num_warps=64)], key=["n"])
@triton.jit
def negate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Every config has 2,048 threads: nothing is left, and the launch really fails."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)


def negate(x):
    out = torch.empty_like(x)
    n = x.numel()
    negate_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, out, n)
    return out


if __name__ == "__main__":
    x = torch.randn(1 << 16, device="cuda")
    a = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    for name, call in {"matmul": lambda: matmul(a, a), "scale": lambda: scale(x), "shift": lambda: shift(x),
                       "negate": lambda: negate(x)}.items():
        try:
            call()
            torch.cuda.synchronize()
            print(f"{name}: ran", flush=True)
        except Exception as error:  # noqa: BLE001 - each call is one try; the rest go on
            print(f"{name}: failed: {type(error).__name__}: {str(error)[:200]}", flush=True)
