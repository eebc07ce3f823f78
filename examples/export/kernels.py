"""The two kernels of the export example (examples/export/README.md).

Both compile with Triton 3.9.0 for cuda:90 without a GPU; `portcheck.toml` beside this file
names the specialisations `triton-portcheck export` compiles.
"""
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    """out[i] = a * x[i] + y[i] for i < n (fp32)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


@triton.jit
def dequant_matvec_4bit(qweight_ptr, scales_ptr, zeros_ptr, x_ptr, y_ptr, N, K,
                        GROUP_SIZE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """y = W x with W stored GPTQ-style as 4-bit integers.

    W is N x K (out features x in features). Row r of W is packed in qweight[r, K // 8] (int32):
    weight k sits in bits 4*(k % 8) .. 4*(k % 8) + 3 of word k // 8, as an unsigned value q in
    0..15. Each run of GROUP_SIZE weights of a row shares a scale and a zero point
    (scales[r, K // GROUP_SIZE], zeros[r, K // GROUP_SIZE], fp16), and
        W[r, k] = (q[r, k] - zeros[r, k // GROUP_SIZE]) * scales[r, k // GROUP_SIZE].
    x is fp16 (K), y is fp16 (N); the sum is kept in fp32. One program per output row; K must be
    a multiple of GROUP_SIZE and GROUP_SIZE of 8.
    """
    row = tl.program_id(0)
    words_per_row = K // 8
    groups_per_row = K // GROUP_SIZE
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE):
        k = k0 + tl.arange(0, BLOCK_SIZE)
        mask = k < K
        word = tl.load(qweight_ptr + row * words_per_row + k // 8, mask=mask, other=0)
        q = (word >> ((k % 8) * 4)) & 0xF
        group = row * groups_per_row + k // GROUP_SIZE
        scale = tl.load(scales_ptr + group, mask=mask, other=0.0).to(tl.float32)
        zero = tl.load(zeros_ptr + group, mask=mask, other=0.0).to(tl.float32)
        xv = tl.load(x_ptr + k, mask=mask, other=0.0).to(tl.float32)
        acc += (q.to(tl.float32) - zero) * scale * xv
    tl.store(y_ptr + row, tl.sum(acc, axis=0).to(tl.float16))
