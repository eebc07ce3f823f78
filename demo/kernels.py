"""Demo kernels for triton-portcheck.

Each kernel exercises one portability issue of Triton 3.9 across CUDA / HIP
targets. None of them fails artificially: every failure reported for them by
triton-portcheck is a real limitation of the target's backend. The module imports on every
release from Triton 3.0 on, as a library that supports older releases must.
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice

try:
    from triton.language.target_info import is_hip
except ImportError:  # Triton before 3.5: the guarded kernel says what it needs when compiled

    @triton.jit
    def is_hip():
        tl.static_assert(False, "gamma_ratio_guarded needs triton.language.target_info (Triton 3.5 or later)")


# Baseline: plain loads, arithmetic and stores. Portable to every target.
@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


# Vendor math library gap: libdevice.tgamma maps to CUDA's __nv_tgammaf, but
# the HIP (ROCm ocml) libdevice table in Triton has no tgamma, so HIP targets
# fail in the frontend.
@triton.jit
def gamma_ratio(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, libdevice.tgamma(x) / libdevice.tgamma(y), mask=mask)


# Same maths, guarded at compile time with triton.language.target_info.
# is_hip() is a constexpr_function evaluated while the kernel is traced; it asks
# the *active driver* for its target, so the guard only works when the active
# driver reports the target being compiled for. On HIP the tgamma branch is never
# traced and Gamma(x)/Gamma(y) = exp(lgamma(x) - lgamma(y)) is used instead
# (valid for positive x, y, where Gamma > 0).
@triton.jit
def gamma_ratio_guarded(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    if is_hip():
        r = tl.exp(libdevice.lgamma(x) - libdevice.lgamma(y))
    else:
        r = libdevice.tgamma(x) / libdevice.tgamma(y)
    tl.store(out_ptr + offs, r, mask=mask)


# FP8 format support: float8e4nv (OCP e4m3fn) is only accepted on sm_89+ for
# NVIDIA; the HIP backend accepts it on every arch (native on gfx950/gfx12xx,
# software-emulated elsewhere).
@triton.jit
def quantize_fp8(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (x * scale).to(tl.float8e4nv), mask=mask)


# Tensor-descriptor scatter: desc.scatter writes whole rows at arbitrary row
# indices. Lowered to plain stores where descriptors are rewritten to pointers
# (sm < 90, pre-gfx1250 HIP), to TMA scatter4 on sm_100 and TDM on gfx1250;
# on sm_90 / sm_120 Triton emits .tile::scatter4, which ptxas rejects.
@triton.jit
def scatter_rows(src_ptr, idx_ptr, dst_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    vals = tl.load(src_ptr + rows[:, None] * stride_m + cols[None, :])
    dst_rows = tl.load(idx_ptr + rows)
    desc = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[stride_m, 1], block_shape=[1, BLOCK_N])
    desc.scatter(vals, dst_rows, pid_n * BLOCK_N)


# Matrix-unit support by dtype: the same dtype-generic tl.dot is compiled for
# fp16 inputs (fp32 accumulator) and int8 inputs (int32 accumulator, the
# accumulator type follows c_ptr); integer dot support differs between
# architectures (int8 fails on sm_75 in TritonGPUAccelerateMatmul).
@triton.jit
def dot_small(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :])
    c = tl.dot(a, b, out_dtype=c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c)


# Block pointers (tl.make_block_ptr / tl.advance): API drift rather than a
# hardware gap. Triton 3.9 removed block pointers in favour of tensor
# descriptors, so this kernel (valid on older Triton) fails on every target.
@triton.jit
def rowsum_blockptr(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    bp = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BLOCK_M, 0),
                           block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, ), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BLOCK_N)):
        blk = tl.load(bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(blk, axis=1)
        bp = tl.advance(bp, (0, BLOCK_N))
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(out_ptr + rows, acc, mask=rows < M)


# Memory-model APIs: tl.atomic_poll (spin-wait until a flag equals a value,
# acquire/gpu scope) and tl.atomic_load (acquire load), both dedicated
# atomic-load style ops in Triton 3.9 whose lowering is target specific.
@triton.jit
def poll_flags(flag_ptr, data_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    ready = tl.atomic_poll(flag_ptr + pid, 1, sem="acquire", scope="gpu")
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = (offs < n) & ready
    vals = tl.atomic_load(data_ptr + offs, mask=mask, sem="acquire", scope="gpu")
    tl.store(out_ptr + offs, vals, mask=mask)
