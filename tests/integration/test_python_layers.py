"""scripts/check-python-layers: the worker's folders by process (docs/architecture.md's table:
which process each folder's code runs in, which folders it may import) hold on the real tree, and
each kind of violation planted in a copy of it is refused with the file, the line and what it
broke; so are a module or function too long, and the table in the docs saying otherwise."""
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
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "docs" / "architecture.md", tmp_path / "docs")
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
    ("compile/keys.py", "from ..cell import handlers", "compile/ (a library: any process that compiles or "
     "reads Triton) imports portcheck_worker.cell.handlers: it may import only its own folder and base/"),
    ("capture/hook.py", "from ..server import server", "capture/ (the user's own test process) imports "
     "portcheck_worker.server.server: it may import only its own folder and base/, compile/"),
    ("repro/writer.py", "from ..capture import hook", "repro/ (a library: a cell's reproducer) imports "
     "portcheck_worker.capture.hook"),
    ("base/faults.py", "from ..compile.driver import StandInDriver", "base/ (every process) imports "
     "portcheck_worker.compile.driver: it may import only its own folder and none"),
    # The processes: a cell never reaches into the server, a zygote never into its pool, the fork
    # machinery never into a zygote.
    ("cell/handlers.py", "from ..server import probe", "cell/ (a cell's process) imports "
     "portcheck_worker.server.probe: it may import only its own folder and base/, compile/, repro/"),
    ("zygote/process.py", "from ..server import zygote_pool", "zygote/ (a zygote) imports "
     "portcheck_worker.server.zygote_pool"),
    ("forking/fork.py", "from ..zygote import process", "forking/ (the fork server and its zygotes, and a "
     "forked child before its cell) imports portcheck_worker.zygote.process"),
    ("capture/persona.py", "from ..compile.stages import _hidden", "takes the private name _hidden from portcheck_worker.compile.stages"),
    ("server/server.py", "x = probe._secret", "reads the private name _secret of portcheck_worker.server.probe"),
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
    as a whole path (in a folder the worker no longer has), as a folder's path and as a bare
    module name."""
    (copy / "src").mkdir()
    assert guard(copy).returncode == 0
    (copy / "src" / "a.cpp").write_text(
        "// The pool (python/portcheck_worker/serve/zygote_pool.py) and its keys (server/keys.py),\n"
        "// the warm-up (warm_up.py), a user's kernels.py and bench/reduce_recall.py.\n")
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert run.stdout.splitlines() == [
        "src/a.cpp:1: names python/portcheck_worker/serve/zygote_pool.py, which the worker does not have",
        "src/a.cpp:1: names server/keys.py, which the worker does not have",
    ], run.stdout


def test_imports_that_wait_say_why_and_stay_few(copy):
    """Issue 44, item 4: 36 imports of the worker's modules inside functions hid dependencies.
    One with its reason is accepted; past MAX_WAITING_IMPORTS the guard says how many there are."""
    plant(copy, "compile/keys.py", "def later():\n    # Waits: a reason,\n    # on two lines.\n    from . import releases")
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert run.stdout.splitlines() == [
        "2 imports of the worker's modules inside functions (at most 1): move them to the top of their files"], run.stdout


def test_the_table_of_folders_in_the_docs_is_the_guards(copy):
    """Issue 44, item 2: docs/architecture.md's table of the worker's folders is enforced: a row
    that lets a folder import more than the guard does, and a folder with no row, are refused."""
    docs = copy / "docs" / "architecture.md"
    text = docs.read_text()
    row = "| `base/`, `compile/`, `repro/` |"
    assert text.count(row) == 1
    docs.write_text(text.replace(row, "| `base/`, `compile/`, `repro/`, `server/` |"))
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert run.stdout.splitlines() == [
        "docs/architecture.md: cell/ may import base, compile, repro, server says the table; "
        "scripts/check-python-layers allows base, compile, repro"], run.stdout
    docs.write_text(text)
    (copy / "python" / "portcheck_worker" / "helpers").mkdir()
    (copy / "python" / "portcheck_worker" / "helpers" / "__init__.py").write_text('"""Somewhere."""\n')
    (copy / "python" / "portcheck_worker" / "helpers" / "misc.py").write_text("X = 1\n")
    run = guard(copy)
    assert run.returncode == 1, run.stdout
    assert "docs/architecture.md: the worker's helpers/ has no row in the table of its folders" in run.stdout
    assert "python/portcheck_worker/helpers/misc.py: helpers/ is not a package of the worker" in run.stdout
