"""The records a capture run writes: one JSON line per distinct launch (the kernel as `check` will
import it, Triton's specialisation, the caller's options, where it was launched, the device),
and warnings, in a file of each process under $PORTCHECK_CAPTURE_DIR (the tool turns them into
manifest rows: src/capture/capture_rows.cpp).
"""
import json
import os
import sys
import threading

from .imports import warn
from .kernel_home import import_root, kernel_attribute, module_source

RECORD_VERSION = 1


class RecordWriter:

    def __init__(self, out_dir, mode, device):
        self.out_dir = out_dir
        self.mode = mode
        self.device = device
        self.skip_dirs = ()  # the hook's and Triton's folders: never a launch's call site
        self._seen = set()
        self._warned = set()
        self._attributes = {}
        self._sources = {}  # kernel -> its generated module's text, or ""
        self._lock = threading.RLock()

    def kernel(self, jit_function):
        """The kernel as `check` imports it again: its module and name, or its file's source."""
        func = jit_function.fn
        code = func.__code__
        attribute, why_not = self._attribute_of(func)
        return {
            "module": func.__module__,
            "qualname": func.__qualname__,
            "file": os.path.abspath(code.co_filename),
            "line": code.co_firstlineno,
            "import_root": import_root(func.__module__, code.co_filename),
            "attribute": attribute,
            "not_importable": why_not,
            "arg_names": list(jit_function.arg_names),
            **self._generated(func, why_not),
        }

    def first_time(self, identity):
        """Whether this launch (launch_identity: kernel, specialisation, options, autotune config)
        is new."""
        with self._lock:
            if identity in self._seen:
                return False
            self._seen.add(identity)
            return True

    def emit_autotuned(self, configs, device=None):
        """One autotuned launch: the identities of the launch records of the configs it
        benchmarks, once per distinct set (and device)."""
        key = ("autotuned", device or self.device.name(), tuple(sorted(configs)))
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        self._append({"version": RECORD_VERSION,
                      "autotuned": {"configs": sorted(configs), "persona": key[1]}})

    def emit(self, kernel, spec, explicit, autotune=None, warmup=False, site=None, device=None,
             identity=None):
        """One record: the kernel as `check` will import it, Triton's specialisation and the
        options the caller passed; `site` where it was launched (else the first caller outside
        Triton and this hook); `device` the target it was made for when not the persona's;
        `identity` its launch_identity, by which an autotuned launch's record names it."""
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        self._append({
            **({"identity": identity} if identity else {}),
            "version": RECORD_VERSION,
            "mode": self.mode,
            "kernel": kernel,
            "specialization": spec,
            "explicit_options": explicit,
            "autotune": autotune,
            "warmup": warmup,
            "site": site if site is not None else self.call_site(),
            "test": test,
            "persona": device or self.device.name(),
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
            cached = self._sources[func] = module_source(func)
        text, roots = cached
        return {"generated_source": text, "generated_paths": roots} if text else {}

    def _attribute_of(self, func):
        cached = self._attributes.get(func)
        if cached is None:
            cached = self._attributes[func] = kernel_attribute(func)
        return cached

    def call_site(self, skip_dirs=()):
        skipped = self.skip_dirs + tuple(skip_dirs)
        frame = sys._getframe(1)
        while frame is not None:
            name = os.path.abspath(frame.f_code.co_filename)
            if not name.startswith(skipped) and "importlib" not in name:
                return f"{name}:{frame.f_lineno}"
            frame = frame.f_back
        return ""

    def warn_once(self, key, message):
        """In the records, which the tool reads whatever the command printed or swallowed (pytest
        hides a passing test's stderr) and says each warning of every run once. Printed here
        too, each persona's run and each worker process printed it again (issue 51); only a
        warning the records cannot take is printed."""
        if key in self._warned:
            return
        self._warned.add(key)
        try:
            self._append({"version": RECORD_VERSION, "warning": message})
        except OSError:
            warn(message)

    def _append(self, record):
        line = json.dumps(record, default=str) + "\n"
        with self._lock:
            # Opened per record: a forked child (pytest-xdist, multiprocessing) must not share
            # a buffered file object with its parent.
            path = os.path.join(self.out_dir, f"launches-{os.getpid()}.jsonl")
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)
