"""Records, inside the user's own Python process, every specialisation Triton is asked to compile.

`triton-portcheck capture -- CMD` puts a `sitecustomize` on PYTHONPATH that calls `start()`. Nothing
is imported until the program imports Triton itself; then Triton is patched in place:

- interpret: kernels run in Triton's CPU interpreter, where no JIT hook fires. Each launch is
  handed, unchanged, to a shadow `JITFunction` of the same Python function, run as a warm-up under
  a stand-in CUDA driver with `jit_cache_hook` answering "skip": the JIT's own binder and
  `_pack_args` then produce exactly the specialisation a GPU launch would, and nothing compiles.
- record: the JIT itself runs under the stand-in driver; the hook records and skips compile and
  launch (kernels do not run, so tests that check results fail).
- live: the JIT compiles and launches on the real device; the hook only records.

Autotuned kernels contribute one record per config. In the CPU modes the autotuner is asked for
each config in turn (so `@triton.heuristics` inside it are applied by Triton's own code) and, in
interpret mode, the first config then runs for real so the test sees a result.

One JSON line per distinct launch goes to a file of this process in $PORTCHECK_CAPTURE_DIR.
Anything going wrong here must never break the user's program: it is reported on stderr once.
"""
import contextlib
import importlib
import importlib.abc
import json
import os
import re
import sys
import threading

from . import capture_inductor
from . import persona as persona_module

ENV_DIR = "PORTCHECK_CAPTURE_DIR"
ENV_MODE = "PORTCHECK_CAPTURE_MODE"
ENV_HOOK_DIR = "PORTCHECK_CAPTURE_HOOK_DIR"
ENV_FAKE_GPU = "PORTCHECK_CAPTURE_FAKE_GPU"
MODES = ("interpret", "record", "live")
RECORD_VERSION = 1

# The stand-in target when no persona was passed (a hook of a newer worker under an older tool):
# the default persona's. Every NVIDIA arch shares its specialisation rules (BaseBackend:
# divisibility by 16 of pointers and ints).
_STAND_IN_TARGET = ("cuda", 90, 32)

# The AMD backend's attribute for a tensor within 2 GiB (buffer ops). The manifest's rows carry
# what every backend's JIT shares, so a row captured as an AMD device is the same row as one
# captured as an NVIDIA device with the same choices.
_BACKEND_ONLY_ATTRIBUTES = ("tt.pointer_range", )


def run_sitecustomize():
    """Called by the generated sitecustomize: chain the one ours shadows, then start."""
    hook_dir = os.environ.get(ENV_HOOK_DIR)
    if hook_dir:
        _chain_sitecustomize(os.path.realpath(hook_dir))
    try:
        start()
    except Exception as e:  # never break the user's interpreter
        _warn(f"capture could not start: {type(e).__name__}: {e}")


def _chain_sitecustomize(hook_dir):
    ours = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != hook_dir]
    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
    finally:
        if "sitecustomize" not in sys.modules and ours is not None:
            sys.modules["sitecustomize"] = ours
        # Back where it was: programs that start Python with PYTHONPATH made of their sys.path
        # (torch.compile's compile workers) must start it with the hook too.
        for index, entry in enumerate(saved):
            if os.path.realpath(entry or os.curdir) == hook_dir and entry not in sys.path:
                sys.path.insert(min(index, len(sys.path)), entry)


def _warn(message):
    sys.stderr.write(f"triton-portcheck capture: {message}\n")


def start():
    out_dir = os.environ.get(ENV_DIR)
    mode = os.environ.get(ENV_MODE, "interpret")
    if not out_dir or mode not in MODES:
        return
    recorder = Recorder(out_dir, mode)
    if recorder.persona is not None:
        _after_import("torch", recorder.persona.patch_torch)
    if recorder.fake_gpu:
        from . import fake_gpu
        _after_import("torch", lambda torch: fake_gpu.install(recorder, recorder.persona, torch))
    _after_import("triton", recorder.patch)
    _after_import(capture_inductor.MODULE, lambda module: capture_inductor.install(recorder, module))


def _after_import(name, callback):
    """`callback(module)` once the module `name` has been imported: now, or when it is. The
    callbacks of one name run in the order they were given, from one finder (two finders of
    one name would each ask the other)."""
    if name in sys.modules:
        _run_callbacks(sys.modules[name], [callback])
        return
    waiting = next((f for f in sys.meta_path if isinstance(f, _AfterImport) and f.name == name), None)
    if waiting is not None:
        waiting.callbacks.append(callback)
    else:
        sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs callbacks once a module has finished executing, without importing it."""

    def __init__(self, name, callback):
        self.name = name
        self.callbacks = [callback]

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _AfterImport) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                # Stays on sys.meta_path until the package has executed: importlib.util.find_spec
                # (torch probes for Triton this way) asks without importing.
                spec.loader = _CallbackLoader(spec.loader, self._done)
                return spec
        return None

    def _done(self, module):
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        _run_callbacks(module, self.callbacks)


def _run_callbacks(module, callbacks):
    """Each hook of an imported module, whether it was imported before the hook or after: one
    that fails leaves the others, and the program, be."""
    for callback in callbacks:
        try:
            callback(module)
        except Exception as e:
            _warn(f"cannot hook {module.__name__} ({type(e).__name__}: {e}); "
                  f"{_UNHOOKED.get(module.__name__, 'nothing will be recorded')}")


# What a module the hook could not patch means for the capture.
_UNHOOKED = {
    "torch": "host code that asks torch about the device sees the real one, not the persona",
    capture_inductor.MODULE: "the kernels torch.compile generates will not be recorded",
}


class _CallbackLoader(importlib.abc.Loader):

    def __init__(self, inner, callback):
        self._inner = inner
        self._callback = callback

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._callback(module)

    def __getattr__(self, name):  # resource readers and the like
        return getattr(self._inner, name)


class _Launch:
    """What the JIT hook cannot see: the caller's own option arguments, where, and which config."""

    def __init__(self, explicit_options, warmup, autotune=None):
        self.explicit_options = explicit_options
        self.warmup = warmup
        self.autotune = autotune


class Recorder:

    def __init__(self, out_dir, mode):
        self.mode = mode
        self.out_dir = out_dir
        self._seen = set()
        self._local = threading.local()
        self._lock = threading.RLock()
        self._tuner_lock = threading.RLock()
        self._interpreted_class = ()
        self._skip_dirs = ()
        self._warned = set()
        self._attributes = {}
        self._sources = {}  # kernel -> its generated module's text, or ""
        # The device host code is told it runs on (CPU modes); live mode records the real one.
        self.persona = persona_module.from_environment() if mode != "live" else None
        self._persona_name = self.persona.name if self.persona is not None else None
        # `capture --fake-gpu` (record mode): torch believes in the persona's device (fake_gpu.py).
        self.fake_gpu = mode == "record" and self.persona is not None and os.environ.get(ENV_FAKE_GPU) == "1"

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
        self._skip_dirs = (os.path.dirname(os.path.abspath(triton.__file__)) + os.sep,
                           os.path.dirname(os.path.abspath(__file__)) + os.sep)
        self._jit_module = jit
        self._patch_autotuner(autotuner.Autotuner)
        if self.mode == "interpret":
            from triton.runtime import interpreter
            self._interpreted_class = interpreter.InterpretedFunction
            self._patch_interpreter(interpreter.InterpretedFunction)
        else:
            self._patch_jit(jit.JITFunction)
            self._install_cache_hook()
        if self.mode != "live":
            # Host code asks the active driver what it runs on (is_hip(), the device's SM count)
            # before it launches, in both CPU modes.
            from triton.runtime import driver as driver_config
            driver_config.set_active(self._stand_in_driver())

    def _stand_in_driver(self):
        if self.persona is not None:
            return self.persona.driver()
        from triton.backends.compiler import GPUTarget
        from .driver import StandInDriver
        return StandInDriver(GPUTarget(*_STAND_IN_TARGET))

    def _device_name(self):
        """The persona's target, or in live mode the real device's ("cuda:90")."""
        if self._persona_name is None:
            from triton.runtime import driver as driver_config
            target = driver_config.active.get_current_target()
            self._persona_name = f"{target.backend}:{target.arch}"
        return self._persona_name

    def _install_cache_hook(self):
        from triton import knobs
        previous = knobs.runtime.jit_cache_hook
        recorder = self

        def hook(**kwargs):
            answer = previous(**kwargs) if previous is not None else None
            skip = recorder._on_compile(**kwargs)
            return skip or answer

        knobs.runtime.jit_cache_hook = hook

    def _patch_jit(self, cls):
        original = cls.run
        recorder = self

        def run(fn, *args, grid, warmup, **kwargs):
            autotune, _dry = recorder._config_state()
            launch = _Launch(recorder._explicit_options(fn, kwargs), warmup, autotune)
            with recorder._launch(launch):
                return original(fn, *args, grid=grid, warmup=warmup, **kwargs)

        cls.run = run

    def _patch_interpreter(self, cls):
        original = cls.run
        recorder = self

        def run(fn, *args, grid, warmup, **kwargs):
            autotune, dry = recorder._config_state()
            try:
                recorder._record_interpreted(fn, args, kwargs, grid, warmup, autotune)
            except Exception as e:
                recorder.warn_once(("interp", fn.__name__, type(e).__name__),
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
            with self._autotune_config({"count": len(tuner.configs)}, False):
                return original(tuner, *args, **kwargs)
        # The configs are swapped on the tuner object, which other threads share: one capture-
        # mode autotuned launch at a time.
        with self._tuner_lock:
            return self._tuner_run_each_config(original, tuner, args, kwargs)

    def _tuner_run_each_config(self, original, tuner, args, kwargs):
        configs = self._configs_to_try(tuner, args, kwargs)
        saved = tuner.configs
        try:
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
        from triton import knobs
        from triton.runtime import driver as driver_config
        launch = _Launch(self._explicit_options(fn, kwargs), warmup, autotune)
        with self._lock, self._launch(launch):
            previous_driver = getattr(driver_config, "_active", None)
            previous_hook = knobs.runtime.jit_cache_hook
            driver_config.set_active(self._stand_in_driver())
            knobs.runtime.jit_cache_hook = self._on_compile
            try:
                # A warm-up stops before any launch; the hook's "skip" stops before compiling.
                shadow.run(*args, grid=grid, warmup=True, **dict(kwargs))
            finally:
                knobs.runtime.jit_cache_hook = previous_hook
                driver_config._active = previous_driver

    def _on_compile(self, *, key, repr, fn, compile, is_manual_warmup, already_compiled, **_):
        launch = self._current()
        try:
            self._write(fn.jit_function, compile["specialization_data"], launch)
        except Exception as e:
            name = getattr(getattr(fn, "jit_function", None), "__name__", "?")
            self.warn_once(("write", name, type(e).__name__), f"a launch of {name} was not "
                            f"recorded: {type(e).__name__}: {e}")
        return self.mode != "live"

    def _write(self, jit_function, specialization_data, launch):
        spec = _shared_attributes(json.loads(specialization_data))
        func = jit_function.fn
        explicit = {k: _jsonable(v) for k, v in (launch.explicit_options if launch else {}).items()}
        autotune = launch.autotune if launch else None
        if not self.first_time(func.__module__, func.__qualname__, spec, explicit, autotune):
            return
        code = func.__code__
        attribute, why_not = self._attribute_of(func)
        kernel = {
            "module": func.__module__,
            "qualname": func.__qualname__,
            "file": os.path.abspath(code.co_filename),
            "line": code.co_firstlineno,
            "import_root": _import_root(func.__module__, code.co_filename),
            "attribute": attribute,
            "not_importable": why_not,
            "arg_names": list(jit_function.arg_names),
            **self._generated(func, why_not),
        }
        self.emit(kernel, spec, explicit, autotune, bool(launch.warmup) if launch else False)

    def first_time(self, module, qualname, spec, explicit, autotune):
        """Whether this launch (kernel, specialisation, options, autotune config) is new."""
        identity = json.dumps([module, qualname, spec["signature"], spec["constant_keys"],
                               spec["constant_vals"], spec["attrs_keys"], spec["attrs_vals"], explicit,
                               autotune and autotune.get("index")], sort_keys=True, default=str)
        with self._lock:
            if identity in self._seen:
                return False
            self._seen.add(identity)
            return True

    def emit(self, kernel, spec, explicit, autotune=None, warmup=False, site=None, device=None):
        """One record: the kernel as `check` will import it, Triton's specialisation and the
        options the caller passed; `site` where it was launched (else the first caller outside
        Triton and this hook); `device` the target it was made for when not the persona's."""
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        self._append({
            "version": RECORD_VERSION,
            "mode": self.mode,
            "kernel": kernel,
            "specialization": spec,
            "explicit_options": explicit,
            "autotune": autotune,
            "warmup": warmup,
            "site": site if site is not None else self.call_site(),
            "test": test,
            "persona": device or self._device_name(),
        })

    def _generated(self, func, why_not):
        """For a module-level kernel whose module `check` could not import again by name (a
        library that writes kernels into files at run time and loads them by path): the file's
        text, made importable on its own, and the sys.path entries its added imports need;
        `capture` saves it beside the manifest. Nothing otherwise."""
        if why_not is None or "." in func.__qualname__ or "<" in func.__qualname__:
            return {}
        cached = self._sources.get(func)
        if cached is None:
            cached = self._sources[func] = _module_source(func)
        text, roots = cached
        return {"generated_source": text, "generated_paths": roots} if text else {}

    def _attribute_of(self, func):
        cached = self._attributes.get(func)
        if cached is None:
            cached = self._attributes[func] = _kernel_attribute(func)
        return cached

    def call_site(self, skip_dirs=()):
        skipped = self._skip_dirs + tuple(skip_dirs)
        frame = sys._getframe(1)
        while frame is not None:
            name = os.path.abspath(frame.f_code.co_filename)
            if not name.startswith(skipped) and "importlib" not in name:
                return f"{name}:{frame.f_lineno}"
            frame = frame.f_back
        return ""

    def warn_once(self, key, message):
        """On stderr, and in the records: pytest swallows a passing test's stderr."""
        if key in self._warned:
            return
        self._warned.add(key)
        _warn(message)
        try:
            self._append({"version": RECORD_VERSION, "warning": message})
        except OSError:
            pass

    def _append(self, record):
        line = json.dumps(record, default=str) + "\n"
        with self._lock:
            # Opened per record: a forked child (pytest-xdist, multiprocessing) must not share
            # a buffered file object with its parent.
            path = os.path.join(self.out_dir, f"launches-{os.getpid()}.jsonl")
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)


def _shared_attributes(spec):
    """The specialisation without the attributes only one backend's JIT adds (see
    _BACKEND_ONLY_ATTRIBUTES). Each argument keeps its entry, empty if need be, as an NVIDIA JIT
    records one for a pointer that is not divisible by 16."""
    spec["attrs_vals"] = [[a for a in attrs
                           if not (isinstance(a, list) and a and a[0] in _BACKEND_ONLY_ATTRIBUTES)]
                          for attrs in spec["attrs_vals"]]
    return spec


def _jsonable(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def _module_source(func):
    """The source of the file that defines `func` as a module-level name, then the imports that
    give the names its module was handed at run time (flag_gems loads a generated file, then
    copies its op module's globals into it: `NameError: erf` when the file is loaded alone); ""
    when there is no file to read or it does not define the function at module level."""
    import linecache
    filename = func.__code__.co_filename
    if os.path.isfile(filename):
        try:
            with open(filename, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            return "", []
    else:
        text = "".join(linecache.getlines(filename))
    if not re.search(rf"^def {re.escape(func.__name__)}\b", text, re.M):
        return "", []
    given, roots = _imports_of_given_globals(text, func.__globals__, func.__module__)
    if given:
        # At the end: the lines of the file stay where they were, and these names are only read
        # when a kernel is compiled, after the module has run (as in the library, which also
        # ran the file before handing them over).
        text = (text.rstrip("\n") + "\n\n\n# Added by triton-portcheck capture: what this module was "
                "given at run time.\n" + "\n".join(given) + "\n")
    return text, roots


def _imports_of_given_globals(text, module_globals, module_name):
    """`from M import X as name` for each name the file reads whose value in the running module
    came from another module (handed over, or replacing the file's own definition), where M.X is
    that very object; and the sys.path entries those modules were imported from."""
    import ast
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [], []
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    imported = {(alias.asname or alias.name).split(".")[0] for node in tree.body
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    lines, homes = [], set()
    for name in sorted(read - imported):
        value = module_globals.get(name)
        if value is None:
            continue
        if isinstance(value, type(sys)):
            lines.append(f"import {value.__name__} as {name}" if value.__name__ != name
                         else f"import {name}")
            homes.add(value.__name__)
            continue
        found = _home_of(value)
        if found and found[0] != module_name:
            lines.append(f"from {found[0]} import {found[1]} as {name}")
            homes.add(found[0])
    roots = {_import_root(home, getattr(sys.modules.get(home), "__file__", None) or "<none>")
             for home in homes}
    return lines, sorted(r for r in roots if r)


def _home_of(value):
    """(module, name) where `value` is a module-level attribute, found through the object itself
    or what it wraps (`.fn`: the interpreter's and the JIT's function objects, autotuners)."""
    candidate = value
    for _ in range(8):
        home, name = getattr(candidate, "__module__", None), getattr(candidate, "__qualname__", None)
        if (isinstance(home, str) and isinstance(name, str) and name.isidentifier()
                and getattr(sys.modules.get(home), name, None) is value):
            return home, name
        candidate = getattr(candidate, "fn", None)
        if candidate is None:
            return None
    return None


def _kernel_attribute(func):
    """(name, None) of the module-level attribute `check` can import the kernel by: the JIT object,
    or a wrapper (autotuner, heuristics, a library's) whose `.fn` chain leads to it. Else (None,
    why not): kernels generated at run time, or defined inside a function or class."""
    if "<" in func.__qualname__ or "." in func.__qualname__:
        return None, "it is defined inside a function or class"
    module = sys.modules.get(func.__module__)
    if module is None:
        return None, "the module is not importable by name (not in sys.modules: generated at run time?)"
    names = [func.__name__] + [n for n in vars(module) if n != func.__name__]
    for name in names:
        obj = getattr(module, name, None)
        try:
            for _ in range(8):
                if obj is None or obj is func:
                    break
                if getattr(obj, "fn", None) is func:
                    return name, None
                obj = getattr(obj, "fn", None)
        except Exception:  # a module attribute whose `fn` is a property that raises
            continue
    return None, f"no module-level name of {func.__module__} holds this @triton.jit function"


def _import_root(module, filename):
    """The sys.path entry `module` was imported from, or None when it cannot be imported by name."""
    if not module or module == "__main__" or "<" in filename:
        return None
    parts = module.split(".")
    path = os.path.abspath(filename)
    stem, _ = os.path.splitext(os.path.basename(path))
    folder = os.path.dirname(path)
    if stem == "__init__":
        names = parts
    else:
        if stem != parts[-1]:
            return None
        names = parts[:-1]
    for name in reversed(names):
        if os.path.basename(folder) != name:
            return None
        folder = os.path.dirname(folder)
    return folder
