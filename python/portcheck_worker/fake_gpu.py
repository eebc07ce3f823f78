"""`capture --mode record --fake-gpu`: torch.compile's Triton kernels on a machine without a GPU.

Inductor generates its CUDA/HIP Triton kernels only for tensors on a GPU device. Here torch is
made to believe one device of the run's persona exists, every tensor is a FakeTensor (shapes,
dtypes and devices without storage), Inductor records each kernel config it would compile and
compiles nothing (capture_inductor.py), nothing launches, and max-autotune's benchmarks answer
with made-up timings (the first candidate wins; every candidate is recorded all the same).

This is for scripts that run a model through torch.compile, not for test suites: results are
fake, so tests that check them fail, and a test that branches on `torch.cuda.is_available()`
now takes its GPU path. Autograd and torch.export on fake CUDA tensors abort inside torch's C++
(c10::cuda::getCurrentCUDAStream), which nothing here can reach: compile under torch.no_grad().
Written against torch 2.15's internals; each patch is skipped, with a warning, where a torch
lacks what it replaces.
"""

# torch.cuda functions that would reach the CUDA runtime, and what the one fake device answers.
_NO_DEVICE_CALLS = {
    "is_available": lambda: True,
    "device_count": lambda: 1,
    "current_device": lambda: 0,
    "set_device": lambda device: None,
    "_lazy_init": lambda: None,
    "is_initialized": lambda: True,
    "synchronize": lambda device=None: None,
    "_exchange_device": lambda device: 0,
    "_maybe_exchange_device": lambda device: 0,
    "memory_allocated": lambda device=None: 0,
    "is_current_stream_capturing": lambda: False,
}


def install(recorder, persona, torch):
    warn = recorder.warn_once
    properties = persona.torch_properties()
    _patch_cuda(torch, persona, properties)
    _after = _importer(recorder)
    _after("torch._dynamo.device_interface", lambda m: _patch_device_interface(m, torch, properties))
    _after("torch._inductor.fx_passes.joint_graph", lambda m: _patch_pattern_setup(m, torch))
    _after("torch._inductor.select_algorithm", _patch_benchmarks)
    _after("torch._inductor.runtime.triton_helpers", _patch_driver_setup)
    from torch._subclasses.fake_tensor import FakeTensorMode
    try:
        # For the rest of the process: every tensor made from here on is fake.
        FakeTensorMode(allow_non_fake_inputs=True).__enter__()
    except Exception as e:  # a torch without it: nothing can be generated, say so once
        warn(("fake-gpu", "mode"), f"--fake-gpu: cannot enter FakeTensorMode: {type(e).__name__}: {e}")


def _importer(recorder):
    from .capture import _after_import

    def after(name, patch):
        def guarded(module):
            try:
                patch(module)
            except Exception as e:
                recorder.warn_once(("fake-gpu", name), f"--fake-gpu: cannot patch {name} "
                                   f"({type(e).__name__}: {e}): torch.compile may fail here")
        _after_import(name, guarded)
    return after


def _patch_cuda(torch, persona, properties):
    cuda = torch.cuda
    for name, answer in _NO_DEVICE_CALLS.items():
        setattr(cuda, name, answer)
    torch._C._cuda_getDeviceCount = lambda: 1
    cuda.get_arch_list = lambda: [persona.device.get("gcnArchName", "").split(":")[0]
                                  if persona.backend == "hip" else f"sm_{persona.device['arch']}"]
    cuda.mem_get_info = lambda device=None: (properties.total_memory, properties.total_memory)
    cuda.is_bf16_supported = lambda including_emulation=True: True
    # Dynamo saves and restores the RNG state around a compile (preserve_rng_state).
    state = torch.zeros(16, dtype=torch.uint8)
    for module in (cuda, cuda.random):
        module.get_rng_state = lambda device="cuda": state.clone()
        module.set_rng_state = lambda new_state, device="cuda": None
        module.get_rng_state_all = lambda: [state.clone()]
        module.set_rng_state_all = lambda states: None
    cuda.graphs.is_current_stream_capturing = lambda: False
    # The compiled graph's wrapper allocates its buffers and asks for the stream in C++, past
    # FakeTensorMode: its buffers are made fake too, and its kernels launch nothing.
    torch._C._dynamo.guards._empty_strided_cuda = (
        lambda size, stride, dtype: torch.empty_strided(size, stride, dtype=dtype, device="cuda"))
    torch._C._cuda_getCurrentRawStream = lambda device=None: 0
    # Dynamo keeps a real current stream when an accelerator is available: say there is none.
    torch.accelerator.is_available = lambda *args, **kwargs: False
    torch.accelerator.current_device_index = lambda: 0


def _patch_device_interface(module, torch, properties):
    """Dynamo's CudaInterface copied torch.cuda's functions when it was defined."""
    cuda = torch.cuda
    interface = module.CudaInterface
    for name, source in (("current_device", "current_device"), ("set_device", "set_device"),
                         ("device_count", "device_count"), ("synchronize", "synchronize"),
                         ("get_device_properties", "get_device_properties"),
                         ("exchange_device", "_exchange_device"),
                         ("maybe_exchange_device", "_maybe_exchange_device"),
                         ("memory_allocated", "memory_allocated"),
                         ("is_bf16_supported", "is_bf16_supported")):
        setattr(interface, name, staticmethod(getattr(cuda, source)))
    interface.get_raw_stream = staticmethod(lambda index=0: 0)
    module.caching_worker_device_properties["cuda"] = [properties]
    module.caching_worker_current_devices["cuda"] = 0


def _patch_pattern_setup(module, torch):
    """Inductor traces its fusion patterns once, with tensors on the graph's device, and some of
    its ops (randperm, torch.tensor) reach the CUDA runtime even under FakeTensorMode; the
    patterns do not depend on the device."""
    original = module.lazy_init

    def lazy_init(input_device=None, *args, **kwargs):
        return original(torch.device("cpu"), *args, **kwargs)

    module.lazy_init = lazy_init


def _patch_benchmarks(module):
    """max-autotune compiles and times each candidate on the device. Here each Triton candidate
    is precompiled (so recorded: Python 3.11 before 3.11.9 skips that step) and the timings are
    made up: Triton candidates first, in Inductor's order, so that the final kernel is one."""

    def make_benchmark_fn(self, choices, *args, **kwargs):
        def benchmark(candidates):
            triton_first = sorted(candidates, key=lambda c: _bench_request(c) is None)
            for candidate in triton_first:
                _precompile(candidate)
            return {c: 1.0 + i for i, c in enumerate(triton_first)}
        return benchmark

    module.AlgorithmSelectorCache.make_benchmark_fn = make_benchmark_fn


def _bench_request(choice):
    request = getattr(choice, "bmreq", None)
    return request if request is not None and hasattr(request, "module_path") else None


def _precompile(choice):
    request = _bench_request(choice)
    if request is None:
        return
    from torch._inductor.codecache import PyCodeCache
    module = PyCodeCache.load_by_key_path(request.module_cache_key, request.module_path)
    getattr(module, request.kernel_name).precompile()


def _patch_driver_setup(module):
    """A generated module selects the GPU's Triton driver at import; the hook's stands in."""
    module.set_driver_to_gpu = lambda: None
