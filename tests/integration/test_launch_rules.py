"""The launch-limit rules, at their one home (python/portcheck_worker/compile/launch_rules.py,
issue 44 item 3): what a compiled kernel needs against a target's limits, in the words every report
says it. The worker judges each compiled cell with them and the tool takes the answer; every
reproducer carries the same code, so a reproducer and `check` cannot disagree on a launch."""
import sys

from conftest import WORKER_DIR

sys.path.insert(0, str(WORKER_DIR))
from portcheck_worker.compile.launch_rules import launch_check  # noqa: E402  (the worker's own)
from portcheck_worker.repro import script  # noqa: E402

H100 = {"max_threads_per_block": 1024, "max_shared_bytes_per_block": 232448, "max_registers_per_block": 65536,
        "max_registers_per_thread": 255, "register_allocation_unit": 256, "max_cluster_size": 16,
        "max_tensor_memory_columns": 512}


def test_a_kernel_that_fits_needs_what_its_metadata_says():
    verdict = launch_check({"num_warps": 4, "warp_size": 32, "shared": 1024, "num_ctas": 1}, 40, H100, "cuda:90", 32)
    # 40 registers x 32 lanes = 1280, a multiple of the 256 allocation unit: 1280 per warp.
    assert verdict == {"needs": {"threads_per_block": 128, "shared_bytes": 1024, "num_ctas": 1,
                                 "registers_per_thread": 40, "registers_per_block": 5120}, "problems": [],
                       "exceeded": []}


def test_each_limit_exceeded_is_one_problem_in_the_reports_words():
    verdict = launch_check({"num_warps": 64, "warp_size": 32, "shared": 240000, "num_ctas": 32, "tmem_size": 1024},
                           255, H100, "cuda:90", 32)
    assert verdict["problems"] == [
        "needs 2048 threads per block (64 warps of 32); cuda:90 allows 1024",
        "needs 240000 bytes of shared memory; cuda:90 allows 232448",
        "needs 524288 registers per block; cuda:90 allows 65536",  # 255 x 32 = 8160 -> 8192 per warp
        "needs a cluster of 32 CTAs; cuda:90 allows 16",
        "needs 1024 columns of tensor memory; cuda:90 allows 512",
    ]
    # Which need each problem is, in the same order: what the autotuner rules map to Triton's checks.
    assert verdict["exceeded"] == ["threads_per_block", "shared_bytes", "registers_per_block", "num_ctas",
                                   "tensor_memory_columns"]


def test_registers_are_allocated_per_warp_in_whole_units():
    # 33 registers x 32 lanes = 1056, rounded up to 1280 per warp: 16 warps need 20480, which
    # fits; the allocation unit, left out, would have said 16896 (it was, in reproducers).
    assert launch_check({"num_warps": 16, "warp_size": 32}, 33, H100, "cuda:90", 32)["needs"]["registers_per_block"] == 20480
    without_unit = {k: v for k, v in H100.items() if k != "register_allocation_unit"}
    assert launch_check({"num_warps": 16, "warp_size": 32}, 33, without_unit, "cuda:90", 32)["needs"][
        "registers_per_block"] == 16896


def test_what_is_unknown_is_not_judged():
    # No registers (no cubin: an AMD target), no tensor memory used, no limit in the table.
    verdict = launch_check({"num_warps": 8}, None, {"max_threads_per_block": 1024}, "hip:gfx942", 64)
    assert verdict == {"needs": {"threads_per_block": 512, "shared_bytes": 0, "num_ctas": 1}, "problems": [],
                       "exceeded": []}


def test_metadata_that_is_not_a_count_reads_as_its_default():
    # The metadata comes from a process where user code ran: damage is never a made-up need.
    verdict = launch_check({"num_warps": -4, "warp_size": "32", "shared": 1.5, "num_ctas": True}, None, H100,
                           "cuda:90", 32)
    assert verdict["needs"] == {"threads_per_block": 0, "shared_bytes": 0, "num_ctas": 1}


def test_every_reproducer_carries_the_same_rules():
    _, body = script.harness_text()
    assert "def launch_check(" in body and "def _count(" in body
