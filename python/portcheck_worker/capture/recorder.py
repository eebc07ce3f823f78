"""The recorder: Triton's JIT, interpreter and autotuner patched in place, each launch's
specialisation written once as a JSON line (hook.py starts it; the module docstring there says
what each mode does).
"""
import contextlib
import json
import os
import threading

from ..compile import releases
from .launch_records import jsonable, launch_identity, portable_options, shared_attributes
from .record_writer import RecordWriter
from .run_device import RunDevice


class _Launch:
    """What the JIT hook cannot see: the caller's own option arguments, where, and which config."""

    def __init__(self, explicit_options, warmup, autotune=None):
        self.explicit_options = explicit_options
        self.warmup = warmup
        self.autotune = autotune
        self.identity = None  # the launch record's, once the hook has seen it


class _TunerRun:
    """One autotuned launch: the identities of the launch records of the configs it benchmarks,
    in order (a config seen before is in it too, though its record was written then)."""

    def __init__(self):
        self.configs = []

    def add(self, identity):
        if identity is not None and identity not in self.configs:
            self.configs.append(identity)


class Recorder:

    """The launch hook: Triton's JIT, interpreter and autotuner patched so that each launch is
    seen with the caller's options and autotune config, its specialisation taken from the JIT's
    own cache hook, and handed to the records."""

    def __init__(self, out_dir, mode):
        self.mode = mode
        # The device host code is told it runs on (CPU modes); live mode records the real one.
        self.device = RunDevice(mode)
        self.records = RecordWriter(out_dir, mode, self.device)
        self._local = threading.local()
        self._lock = threading.RLock()
        self._tuner_lock = threading.RLock()
        self._interpreted_class = ()
        self._kernel_identities = {}  # id(compiled kernel) -> (kernel, record identity): live mode

    # -- context of the launch being recorded ------------------------------------------------

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    @contextlib.contextmanager
    def _launch(self, launch):
        stack = self._stack()
        stack.append(launch)
        try:
            yield launch
        finally:
            stack.pop()

    def _current(self):
        stack = self._stack()
        return stack[-1] if stack else None

    @contextlib.contextmanager
    def tuner_run_recorded(self):
        """An autotuned launch, written as one record of its configs once it ends (a launch with
        one config benchmarks nothing: Triton launches it as it is)."""
        runs = getattr(self._local, "tuner_runs", None)
        if runs is None:
            runs = self._local.tuner_runs = []
        run = _TunerRun()
        runs.append(run)
        try:
            yield run
        finally:
            runs.pop()
            if len(run.configs) > 1:
                self.records.emit_autotuned(run.configs)

    def note_config(self, identity):
        runs = getattr(self._local, "tuner_runs", None)
        if runs:
            runs[-1].add(identity)

    def _autotune(self):
        stack = getattr(self._local, "autotune", None)
        return stack[-1] if stack else None

    @contextlib.contextmanager
    def _autotune_config(self, info, dry):
        stack = getattr(self._local, "autotune", None)
        if stack is None:
            stack = self._local.autotune = []
        stack.append((info, dry))
        try:
            yield
        finally:
            stack.pop()

    # -- patching ----------------------------------------------------------------------------

    def patch(self, triton):
        from triton.runtime import autotuner, jit
        self.records.skip_dirs = (os.path.dirname(os.path.abspath(triton.__file__)) + os.sep,
                                  os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)
        self._jit_module = jit
        self._patch_autotuner(autotuner.Autotuner)
        if self.mode == "interpret":
            from triton.runtime import interpreter
            self._interpreted_class = interpreter.InterpretedFunction
            releases.current().unify_interpreter(interpreter.InterpretedFunction)
            self._patch_interpreter(interpreter.InterpretedFunction)
        else:
            self._patch_jit(jit.JITFunction)
            self._install_cache_hook()
        if self.mode != "live":
            # Host code asks the active driver what it runs on (is_hip(), the device's SM count)
            # before it launches, in both CPU modes.
            from triton.runtime import driver as driver_config
            driver_config.set_active(self.device.stand_in_driver())

    def _install_cache_hook(self):
        release = releases.current()
        previous = release.jit_cache_hook()
        recorder = self

        def hook(**kwargs):
            answer = previous(**kwargs) if previous is not None else None
            skip = recorder._on_compile(**kwargs)
            return skip or answer

        release.set_jit_cache_hook(hook)

    def _patch_jit(self, cls):
        original = cls.run
        recorder = self

        def run(fn, *args, grid, warmup, **kwargs):
            autotune, _dry = recorder._config_state()
            launch = _Launch(recorder._explicit_options(fn, kwargs), warmup, autotune)
            with recorder._launch(launch):
                kernel = original(fn, *args, grid=grid, warmup=warmup, **kwargs)
            recorder._remember_kernel(kernel, launch)
            return kernel

        cls.run = run

    def _remember_kernel(self, kernel, launch):
        """Live mode compiles a config once; a later autotuned launch that benchmarks it again
        finds the compiled kernel in the JIT's cache, and the hook does not fire: the kernel
        object carries the identity of the record it was compiled for."""
        if kernel is None or self.mode != "live":
            return
        if launch.identity is not None:
            self._kernel_identities[id(kernel)] = (kernel, launch.identity)
        else:
            self.note_config(self._kernel_identities.get(id(kernel), (None, None))[1])

    def _patch_interpreter(self, cls):
        original = cls.run
        recorder = self

        def run(fn, *args, grid, warmup, **kwargs):
            autotune, dry = recorder._config_state()
            try:
                recorder._record_interpreted(fn, args, kwargs, grid, warmup, autotune)
            except Exception as e:
                recorder.records.warn_once(("interp", fn.__name__, type(e).__name__),
                                           f"a launch of {fn.__name__} was not recorded: "
                                           f"{type(e).__name__}: {e}")
            if dry:
                return None
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)

        cls.run = run

    def _patch_autotuner(self, cls):
        """Autotuner.run, and the run of every subclass defined later (libraries subclass it:
        flag_gems' LibTuner), since a subclass's own run would bypass a wrapper on the base."""
        self._wrap_tuner_run(cls)
        recorder = self
        previous = cls.__dict__.get("__init_subclass__")

        def __init_subclass__(sub, **kwargs):
            if previous is not None:
                previous.__func__(sub, **kwargs)
            else:
                super(cls, sub).__init_subclass__(**kwargs)
            if "run" in sub.__dict__:
                recorder._wrap_tuner_run(sub)

        cls.__init_subclass__ = classmethod(__init_subclass__)

    def _wrap_tuner_run(self, cls):
        original = cls.run
        recorder = self

        def run(tuner, *args, **kwargs):
            active = getattr(recorder._local, "tuners", None)
            if active is None:
                active = recorder._local.tuners = set()
            if id(tuner) in active:  # a subclass's run calling super().run: handled outside
                return original(tuner, *args, **kwargs)
            active.add(id(tuner))
            try:
                return recorder._tuner_run(original, tuner, args, kwargs)
            finally:
                active.discard(id(tuner))

        cls.run = run

    def _tuner_run(self, original, tuner, args, kwargs):
        if self.mode == "live":
            # The real autotuner compiles every config it benchmarks; the hook sees each one.
            with self.tuner_run_recorded(), self._autotune_config({"count": len(tuner.configs)}, False):
                return original(tuner, *args, **kwargs)
        # The configs are swapped on the tuner object, which other threads share: one capture-
        # mode autotuned launch at a time.
        with self._tuner_lock:
            return self._tuner_run_each_config(original, tuner, args, kwargs)

    def _tuner_run_each_config(self, original, tuner, args, kwargs):
        configs = self._configs_to_try(tuner, args, kwargs)
        saved = tuner.configs
        try:
            with self.tuner_run_recorded():
                for index, config in enumerate(configs):
                    # With one config the autotuner benchmarks nothing: Triton's and subclasses'
                    # run() all go straight to the launch, applying the config and its heuristics.
                    tuner.configs = [config]
                    info = {"index": index, "count": len(configs), "config": str(config)}
                    with self._autotune_config(info, True):
                        original(tuner, *args, **dict(kwargs))
            if self.mode == "record":
                return None
            # One config runs for real in the interpreter so the test sees a result.
            tuner.configs = [configs[0]]
            info = {"index": 0, "count": len(configs), "config": str(configs[0])}
            with self._autotune_config(info, False):
                return original(tuner, *args, **kwargs)
        finally:
            tuner.configs = saved

    @staticmethod
    def _configs_to_try(tuner, args, kwargs):
        # early_config_prune is the user's own statement of which configs are valid for these
        # arguments, so it is applied; perf_model only ranks configs by predicted speed and needs
        # a device's numbers, so every config that survives the early prune is recorded.
        configs = list(tuner.configs)
        prune = getattr(tuner, "early_config_prune", None)
        if prune and len(configs) > 1:
            tuner.nargs = dict(zip(tuner.arg_names, args))
            try:
                configs = list(prune(configs, tuner.nargs, **kwargs)) or configs
            finally:
                tuner.nargs = None
        return configs

    def _config_state(self):
        top = self._autotune()
        if top is None:
            return None, False
        return top

    # -- recording ---------------------------------------------------------------------------

    def _explicit_options(self, fn, kwargs):
        names = set(getattr(fn, "arg_names", ()))
        return {k: v for k, v in kwargs.items() if k not in names}

    def _shadow(self, interpreted):
        """The JITFunction the same @triton.jit would have made without the interpreter."""
        shadow = interpreted.__dict__.get("_portcheck_shadow")
        if shadow is None:
            shadow = self._jit_module.JITFunction(interpreted.fn, **getattr(interpreted, "kwargs", {}))
            interpreted.__dict__["_portcheck_shadow"] = shadow
        return shadow

    def _as_jit(self, value):
        """Arguments as the JIT would see them: a @triton.jit function passed as a constexpr is an
        InterpretedFunction under the interpreter, a JITFunction without it."""
        if isinstance(value, self._interpreted_class):
            return self._shadow(value)
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(self._as_jit(v) for v in value)
        if isinstance(value, list):
            return [self._as_jit(v) for v in value]
        return value

    def _record_interpreted(self, fn, args, kwargs, grid, warmup, autotune):
        shadow = self._shadow(fn)
        args = [self._as_jit(a) for a in args]
        kwargs = {k: self._as_jit(v) for k, v in kwargs.items()}
        from triton.runtime import driver as driver_config
        release = releases.current()
        launch = _Launch(self._explicit_options(fn, kwargs), warmup, autotune)
        with self._lock, self._launch(launch):
            previous_driver = getattr(driver_config, "_active", None)
            previous_hook = release.jit_cache_hook()
            driver_config.set_active(self.device.stand_in_driver())
            release.set_jit_cache_hook(self._on_compile)
            try:
                # A warm-up stops before any launch; the hook's "skip" stops before compiling.
                shadow.run(*args, grid=grid, warmup=True, **dict(kwargs))
            finally:
                release.set_jit_cache_hook(previous_hook)
                driver_config._active = previous_driver

    def _on_compile(self, *, key, repr, fn, compile, is_manual_warmup, already_compiled, **_):
        launch = self._current()
        try:
            self._write(fn.jit_function, compile["specialization_data"], launch)
        except Exception as e:
            name = getattr(getattr(fn, "jit_function", None), "__name__", "?")
            self.records.warn_once(("write", name, type(e).__name__), f"a launch of {name} was not "
                            f"recorded: {type(e).__name__}: {e}")
        return self.mode != "live"

    def _write(self, jit_function, specialization_data, launch):
        # Recorded in the common form, so a row captured with one release compiles with any.
        spec = shared_attributes(releases.current().specialisation(jit_function, json.loads(specialization_data)))
        func = jit_function.fn
        explicit = portable_options({k: jsonable(v) for k, v in (launch.explicit_options if launch else {}).items()},
                                    releases.current().config_only_options)
        autotune = launch.autotune if launch else None
        identity = launch_identity(func.__module__, func.__qualname__, spec, explicit, autotune)
        if launch is not None:
            launch.identity = identity
        self.note_config(identity)
        if not self.records.first_time(identity):
            return
        self.records.emit(self.records.kernel(jit_function), spec, explicit, autotune,
                          bool(launch.warmup) if launch else False, identity=identity)
