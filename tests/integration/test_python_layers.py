"""scripts/check-python-layers: the worker's packages by process (base < compile < capture and
repro, peers < serve) hold on the real tree, and each kind of violation planted in a copy of it
is refused with the file, the line and what it broke; so are a module or function too long."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "scripts" / "check-python-layers"


def guard(repo):
    return subprocess.run([sys.executable, GUARD, repo], capture_output=True, text=True, timeout=60)


@pytest.fixture
def copy(tmp_path):
    shutil.copytree(REPO / "python" / "portcheck_worker", tmp_path / "python" / "portcheck_worker",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def plant(repo, module, line):
    path = repo / "python" / "portcheck_worker" / module
    path.write_text(path.read_text() + "\n" + line + "\n")


def test_the_worker_keeps_its_layers():
    run = guard(REPO)
    assert run.returncode == 0 and run.stdout == "", run.stdout


@pytest.mark.parametrize("module, line, message", [
    # stages imports loader at its top: loader importing stages closes a cycle
    ("compile/loader.py", "from . import stages", "import cycle: portcheck_worker.compile.loader -> "
     "portcheck_worker.compile.stages -> portcheck_worker.compile.loader"),
    ("compile/keys.py", "from ..serve import handlers", "compile/ (rank 2) imports portcheck_worker.serve.handlers"),
    ("capture/hook.py", "from ..serve import server", "capture/ (rank 3) imports portcheck_worker.serve.server"),
    ("repro/writer.py", "from ..capture import hook", "repro/ (rank 3) imports portcheck_worker.capture.hook"),
    ("base/faults.py", "from ..compile.driver import StandInDriver", "base/ (rank 1) imports portcheck_worker.compile.driver"),
    ("capture/persona.py", "from ..compile.stages import _hidden", "takes the private name _hidden from portcheck_worker.compile.stages"),
    ("serve/server.py", "x = handlers._secret", "reads the private name _secret of portcheck_worker.serve.handlers"),
    ("compile/keys.py", "def long_one():\n" + "    pass\n" * 61, "long_one is 62 lines (at most 60)"),
    ("compile/keys.py", "def later():\n    from . import releases", "imports a module of the worker inside later()"),
])
def test_a_planted_violation_is_refused(copy, module, line, message):
    assert guard(copy).returncode == 0
    plant(copy, module, line)
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert message in run.stdout, run.stdout
    if "cycle" not in message:
        assert f"python/portcheck_worker/{module}:" in run.stdout, run.stdout


def test_a_cpp_comment_that_names_a_worker_file_the_worker_lacks_is_refused(copy):
    """Issue 44, item 4: C++ comments named serve/zygote.py for code that had moved to
    zygote_pool.py and zygote_process.py. A worker path a C++ source names must exist: planted
    as a whole path, as a package's path and as a bare module name."""
    (copy / "src").mkdir()
    assert guard(copy).returncode == 0
    (copy / "src" / "a.cpp").write_text(
        "// The pool (python/portcheck_worker/serve/zygote_pools.py) and its keys (serve/keys.py),\n"
        "// the warm-up (forking.py), a user's kernels.py and bench/reduce_recall.py.\n")
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert run.stdout.splitlines() == [
        "src/a.cpp:1: names python/portcheck_worker/serve/zygote_pools.py, which the worker does not have",
        "src/a.cpp:1: names serve/keys.py, which the worker does not have",
    ], run.stdout


def test_imports_that_wait_say_why_and_stay_few(copy):
    """Issue 44, item 4: 36 imports of the worker's modules inside functions hid dependencies.
    One with its reason is accepted; past MAX_WAITING_IMPORTS the guard says how many there are."""
    plant(copy, "compile/keys.py", "def later():\n    # Waits: a reason,\n    # on two lines.\n    from . import releases")
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert run.stdout.splitlines() == [
        "2 imports of the worker's modules inside functions (at most 1): move them to the top of their files"], run.stdout
