"""`capture --mode record --fake-gpu`: torch.compile's Triton kernels on a machine without a GPU.

Inductor generates its CUDA/HIP Triton kernels only for tensors on a GPU device. Here torch is
made to believe one device of the run's persona exists, every tensor is a FakeTensor (shapes,
dtypes and devices without storage), Inductor records each kernel config it would compile and
compiles nothing (capture_inductor.py), nothing launches, and max-autotune's benchmarks answer
with made-up timings (the first candidate wins; every candidate is recorded all the same).

Scripts are run as written for a GPU: tensors and models made on "cuda" (`device="cuda"`,
`with torch.device("cuda")`) or moved there (`.to("cuda")`, `.cuda()`), seeds, synchronize,
empty_cache and `torch.cuda.Event` timing. FakeTensorMode's own provision for a machine without
the device (a no-op CUDA device guard, torch.tensor's data kept on the CPU) is switched on, and
what torch would still compute for real on the device (one-element constants while tracing,
uniform-value folding) is not computed or is computed on the CPU.

This is for scripts that run a model through torch.compile, not for test suites: results are
fake, so tests that check them fail, and a test that branches on `torch.cuda.is_available()`
now takes its GPU path. Autograd on fake CUDA tensors aborts inside torch's C++
(c10::cuda::getCurrentCUDAStream), which nothing here can reach: parameters are made without
requires_grad, so an inference compile records what it would on a GPU and a training step is
compiled as inference (said once).
Written against torch 2.15's internals; each patch is skipped, with a warning, where a torch
lacks what it replaces.
"""
from .imports import after_import

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
    "max_memory_allocated": lambda device=None: 0,
    "memory_reserved": lambda device=None: 0,
    "max_memory_reserved": lambda device=None: 0,
    "reset_peak_memory_stats": lambda device=None: None,
    "reset_max_memory_allocated": lambda device=None: None,
    "empty_cache": lambda: None,
    "is_current_stream_capturing": lambda: False,
}


# torch.compile traced fake tensors from an enclosing FakeTensorMode in torch 2.15 (the tests);
# torch 2.6 and 2.7 refuse them ("fake mode ... from tracing context doesn't match mode ... from
# fake tensor input"): tried, with their Triton 3.2 and 3.3.
_TRIED_REFUSING = (2, 7)


def install(recorder, persona, torch):
    warn = recorder.records.warn_once
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())
    if version <= _TRIED_REFUSING:
        warn(("fake-gpu", "torch"), f"--fake-gpu: torch {torch.__version__}'s torch.compile refuses fake "
             "tensors made outside its own tracing (tried with torch 2.6 and 2.7; torch 2.15 is tested): "
             "Inductor's kernels are probably not generated; kernels the script launches itself still are")
    properties = persona.torch_properties()
    _patch_cuda(torch, persona, properties)
    _patch_placement(torch)
    _patch_parameters(torch, warn)
    _after = _importer(recorder)
    _after("torch._dynamo.device_interface", lambda m: _patch_device_interface(m, torch, properties))
    _after("torch._inductor.fx_passes.joint_graph", lambda m: _patch_pattern_setup(m, torch))
    _after("torch._inductor.fx_passes.joint_graph", lambda m: _patch_uniform_folding(m, torch))
    _after("torch.fx.experimental.proxy_tensor", _patch_constant_tracking)
    _after("torch._inductor.select_algorithm", _patch_benchmarks)
    _after("torch._inductor.runtime.triton_helpers", _patch_driver_setup)
    _after("torch._inductor.config", _no_compile_workers)
    from torch._subclasses.fake_tensor import FakeTensorMode
    # FakeTensorMode's own provision for tracing CUDA code where no CUDA device can be used: a
    # no-op CUDA device guard, and torch.tensor's data kept on the CPU. It decides by
    # torch.cuda.is_available(), which answers True here.
    FakeTensorMode.avoid_device_init = property(lambda self: True)
    # Every fake CUDA tensor first "initialises the device's context" with a real one: torch up
    # to 2.6 whenever torch.cuda.is_available() (True here), later ones when the accelerator is
    # CUDA. There is no device to initialise.
    from torch._subclasses import fake_tensor
    fake_tensor.init_gpu_context = lambda device: None
    try:
        # For the rest of the process: every tensor made from here on is fake.
        FakeTensorMode(allow_non_fake_inputs=True).__enter__()
    except Exception as e:  # a torch without it: nothing can be generated, say so once
        warn(("fake-gpu", "mode"), f"--fake-gpu: cannot enter FakeTensorMode: {type(e).__name__}: {e}")


def _importer(recorder):
    def after(name, patch):
        def guarded(module):
            try:
                patch(module)
            except Exception as e:
                recorder.records.warn_once(("fake-gpu", name), f"--fake-gpu: cannot patch {name} "
                                   f"({type(e).__name__}: {e}): torch.compile may fail here")
        after_import(name, guarded)
    return after


def _no_compile_workers(config):
    """Inductor compiles nothing here (capture_inductor.py records each kernel instead), so its
    pool of compile workers, each a Python that imports torch, is not started: a two-persona
    capture of torch.compile's workloads took 26 CPU-s with it, 15 without, the same rows
    written (bench/fake_gpu_capture.py, two cores)."""
    config.compile_threads = 1


def _patch_cuda(torch, persona, properties):
    cuda = torch.cuda
    for name, answer in _NO_DEVICE_CALLS.items():
        setattr(cuda, name, answer)
    torch._C._cuda_getDeviceCount = lambda: 1
    cuda.get_arch_list = lambda: [(persona.device.gcnArchName or "").split(":")[0]
                                  if persona.backend == "hip" else f"sm_{persona.device.arch}"]
    cuda.mem_get_info = lambda device=None: (properties.total_memory, properties.total_memory)
    cuda.is_bf16_supported = lambda including_emulation=True: True
    # Dynamo saves and restores the RNG state around a compile (preserve_rng_state).
    state = torch.zeros(16, dtype=torch.uint8)
    seed = [0]
    for module in (cuda, cuda.random):
        # Scripts seed every device (torch.manual_seed does too): the fake device keeps the seed.
        module.manual_seed = module.manual_seed_all = lambda value: seed.__setitem__(0, int(value))
        module.seed = module.seed_all = lambda: None
        module.initial_seed = lambda: seed[0]
        module.get_rng_state = lambda device="cuda": state.clone()
        module.set_rng_state = lambda new_state, device="cuda": None
        module.get_rng_state_all = lambda: [state.clone()]
        module.set_rng_state_all = lambda states: None
    cuda.graphs.is_current_stream_capturing = lambda: False
    # The compiled graph's wrapper allocates its buffers and asks for the stream in C++, past
    # FakeTensorMode: its buffers are made fake too, and its kernels launch nothing.
    guards = torch._C._dynamo.guards
    guards._empty_strided_cuda = (
        lambda size, stride, dtype: torch.empty_strided(size, stride, dtype=dtype, device="cuda"))
    # Views of its buffers (an extern matmul's transposed weight) are made in C++ too, where a
    # fake tensor's storage is a meta tensor; and it realigns inputs by their data pointer.
    guards._reinterpret_tensor = (lambda tensor, size, stride, offset=0: torch.as_strided(
        tensor, size, stride, tensor.storage_offset() + offset))
    guards.copy_if_misaligned = lambda tensor: tensor
    torch._C._cuda_getCurrentRawStream = lambda device=None: 0
    # Dynamo keeps a real current stream when an accelerator is available: say there is none.
    torch.accelerator.is_available = lambda *args, **kwargs: False
    torch.accelerator.current_device_index = lambda: 0


class _Event:
    """torch.cuda.Event without the runtime: scripts time their steps with two of these, and
    divide by the time between them; the host's time between the records is what they get."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        self.recorded_at = None

    def record(self, stream=None):
        import time
        self.recorded_at = time.perf_counter()

    def query(self):
        return True

    def wait(self, stream=None):
        return None

    def synchronize(self):
        return None

    def elapsed_time(self, end_event):
        if self.recorded_at is None or end_event.recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return max(1e-3, (end_event.recorded_at - self.recorded_at) * 1000.0)


def _patch_placement(torch):
    """Moving a model to the device (`.to("cuda")`, `.cuda()`, `.half()`) swaps each parameter
    for its converted self, which FakeTensorMode's weak references to its tensors forbid."""
    torch.nn.Module._apply = _module_apply
    torch.cuda.Event = _Event


def _patch_parameters(torch, warn):
    """Autograd cannot run on the fake device (its C++ asks the CUDA runtime for a stream as soon
    as a tensor that requires grad enters a compiled graph, and aborts), so parameters are made
    without `requires_grad`: a model compiled for inference (`torch.no_grad()`, `eval()`) records
    its kernels as it would on a GPU; a training step would be compiled as inference, said once."""
    parameter = torch.nn.Parameter
    original_new = parameter.__new__

    def new(cls, data=None, requires_grad=True):
        if requires_grad:
            warn(("fake-gpu", "requires_grad"), "--fake-gpu: parameters are made without "
                 "requires_grad (autograd cannot run on the fake device): backward kernels are "
                 "not generated")
        return original_new(cls, data, False)

    parameter.__new__ = new


def _module_apply(self, fn, recurse=True):
    """`nn.Module._apply` (behind `.to`, `.cuda`, `.half`) for a model of fake tensors: torch
    swaps each parameter with its converted self, which FakeTensorMode's own weak references
    forbid, and `param.data =` across devices aborts in C++. Each parameter and buffer is
    replaced instead, by one converted copy (tied weights stay tied)."""
    import torch
    converted = {}

    def convert(value, parameter):
        if id(value) not in converted:
            with torch.no_grad():
                new = fn(value)
            converted[id(value)] = (torch.nn.Parameter(new, requires_grad=value.requires_grad)
                                    if parameter else new)
        return converted[id(value)]

    for module in self.modules() if recurse else (self, ):
        for table, parameter in ((module._parameters, True), (module._buffers, False)):
            for name, value in list(table.items()):
                if value is not None:
                    table[name] = convert(value, parameter)
    return self


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


def _patch_constant_tracking(module):
    """While tracing, torch computes one-element constants for real on their device (a
    `torch.tensor(0.5)` moved to "cuda"): no constant is computed here, so such values are
    unknown to the graph, as any tensor's are."""
    module.CONSTANT_NUMEL_LIMIT = -1


def _patch_uniform_folding(module, torch):
    """Inductor folds tensors of one value by computing them for real, one element on the
    graph's device; here on the CPU (the value is what is kept: the folded node keeps its device)."""
    folder = module.UniformValueConstantFolder
    original = folder._deduce_value

    def deduce_value(self, node):
        kwargs = node.kwargs
        device = kwargs.get("device")
        if not (isinstance(device, torch.device) and device.type == "cuda"):
            return original(self, node)
        node.kwargs = {**kwargs, "device": torch.device("cpu")}
        try:
            return original(self, node)
        finally:
            node.kwargs = kwargs

    folder._deduce_value = deduce_value


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
