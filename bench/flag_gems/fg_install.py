"""flag_gems 5.0.2 for the benchmarks, on a machine without a GPU: its PyPI wheel and what its
import needs, installed once into a folder, and a sitecustomize that loads fg_cpu.py (beside this
file) so that it imports on a CPU. Used by bench/run (case f) and bench/reduce_recall.py."""
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
FLAG_GEMS = "flag_gems==5.0.2"
NEEDS = ["PyYAML", "sqlalchemy", "scipy"]  # what its import and fg_cpu.py need beyond torch, numpy
DEFAULT_FOLDER = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) \
    / "triton-portcheck-bench" / "flag_gems"


# fg_cpu.py (beside this file) must run before flag_gems is imported; it imports flag_gems itself.
# Loaded when flag_gems is first imported, not in every Python process: a process that never uses
# flag_gems (the tool's fork server, a cell of another kernel) stays without torch, as it would on
# a machine with a GPU, where nothing needs fg_cpu.
SITECUSTOMIZE = '''import importlib.abc
import importlib.machinery
import sys


class _LoadedByFgCpu(importlib.abc.Loader):
    def create_module(self, spec):
        return sys.modules[spec.name]

    def exec_module(self, module):
        pass


class _FgCpuFirst(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "flag_gems":
            return None
        sys.meta_path.remove(self)
        import fg_cpu  # noqa: F401  (imports flag_gems, patched for a CPU)
        return importlib.machinery.ModuleSpec(name, _LoadedByFgCpu())


sys.meta_path.insert(0, _FgCpuFirst())
'''


def prepare(folder, python):
    """Installs into `folder` unless already there; returns the PYTHONPATH entries that let the
    tool's workers import flag_gems' kernels."""
    site, deps, hook = folder / "site", folder / "deps", folder / "hook"
    if not (site / "flag_gems").is_dir():
        print(f"installing {FLAG_GEMS} into {folder} (once) ...", file=sys.stderr)
        pip = [python, "-m", "pip", "install", "--quiet", "--target"]
        subprocess.run([*pip, str(site), "--no-deps", FLAG_GEMS], check=True)
        subprocess.run([*pip, str(deps), *NEEDS], check=True)
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return [hook, HERE, site, deps]


def captured_rows():
    """The rows captured from flag_gems' own tests on this machine (README.md beside this file)."""
    return HERE / "captured-cpu.toml"
