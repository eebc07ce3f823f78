"""Whether a compiled kernel can launch on its target: what it needs (threads, shared memory,
registers, a cluster, tensor memory) against the target's limits (data/launch-limits.toml, as the
tool sends them), in the words every report says it. The one home of these rules: the worker
judges each compiled cell with them (compile/stages.py) and the tool takes the answer
(src/check/interpret.cpp); every reproducer carries this file's code (repro/script.py), so it
imports nothing.
"""


def _count(metadata, key, fallback):
    """A count of the compiled metadata; one that is not a count (negative, fractional, damaged)
    reads as `fallback`."""
    value = metadata.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else fallback


# Dynamic shared memory a CUDA kernel may use without being allowed more first
# (cudaFuncAttributeMaxDynamicSharedMemorySize): 48 KiB on every architecture.
CUDA_SHARED_BYTES_WITHOUT_OPT_IN = 48 * 1024


def launch_needs(metadata, warp_size):
    """What a compiled kernel needs to launch, whatever the target allows: threads per block,
    shared memory, the CTAs of its cluster, tensor memory when it uses any."""
    warps, ctas = _count(metadata, "num_warps", 0), _count(metadata, "num_ctas", 1)
    warp_size, shared = _count(metadata, "warp_size", warp_size), _count(metadata, "shared", 0)
    needs = {"threads_per_block": warps * warp_size, "shared_bytes": shared, "num_ctas": ctas}
    if _count(metadata, "tmem_size", 0) > 0:
        needs["tensor_memory_columns"] = metadata["tmem_size"]
    return needs


def launch_check(metadata, registers, limits, target, warp_size):
    """{"needs": what the kernel needs, "problems": what of it the target's `limits` do not allow,
    "exceeded": the names in `needs` of those problems}.
    `registers`: per thread, None where unknown (no cubin); `warp_size`: the target's, for
    metadata that lacks it. Registers are allocated per warp, rounded up to the allocation unit."""
    needs = launch_needs(metadata, warp_size)
    warps, warp_size = _count(metadata, "num_warps", 0), _count(metadata, "warp_size", warp_size)
    shared, ctas, tmem = needs["shared_bytes"], needs["num_ctas"], needs.get("tensor_memory_columns", 0)
    checks = [
        ("threads_per_block", "max_threads_per_block",
         f"needs {warps * warp_size} threads per block ({warps} warps of {warp_size})"),
        ("shared_bytes", "max_shared_bytes_per_block", f"needs {shared} bytes of shared memory"),
    ]
    if registers is not None:
        unit = limits.get("register_allocation_unit") or 1
        needs["registers_per_thread"] = registers
        needs["registers_per_block"] = -(-registers * warp_size // unit) * unit * warps
        checks += [("registers_per_thread", "max_registers_per_thread", f"needs {registers} registers per thread"),
                   ("registers_per_block", "max_registers_per_block",
                    f"needs {needs['registers_per_block']} registers per block")]
    checks.append(("num_ctas", "max_cluster_size", f"needs a cluster of {ctas} CTAs"))
    if tmem > 0:
        checks.append(("tensor_memory_columns", "max_tensor_memory_columns", f"needs {tmem} columns of tensor memory"))
    failing = [(need, limit, says) for need, limit, says in checks
               if limits.get(limit) is not None and needs[need] > limits[limit]]
    return {"needs": needs, "problems": [f"{says}; {target} allows {limits[limit]}" for _, limit, says in failing],
            "exceeded": [need for need, _, _ in failing]}
