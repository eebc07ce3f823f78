"""Shared fixtures for the triton-portcheck integration tests.

Everything here drives the real binary (build/triton-portcheck) and the real Python worker in the
project's .venv (real Triton, no GPU). The full demo matrix is compiled once per run (every worker's).
"""
import atexit
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# `make integration` passes both; the defaults are the repository's build and .venv.
BINARY = Path(os.environ.get("PORTCHECK_BIN") or REPO / "build" / "triton-portcheck")
VENV_PYTHON = Path(os.environ.get("PORTCHECK_PYTHON") or REPO / ".venv" / "bin" / "python")
DEMO_DIR = REPO / "demo"
WORKER_DIR = REPO / "python"
HELPERS = Path(__file__).resolve().parent / "helpers"

# Environment variable carried by every process a test run starts, so leaked workers can be found
# in /proc without confusing them with anybody else's triton-portcheck run.
TAG_VAR = "PORTCHECK_ITEST_TAG"

AXPY_SIGNATURE = ('{ x_ptr = "*fp32:16", y_ptr = "*fp32:16", out_ptr = "*fp32:16", n = "i32:16", '
                  'a = "fp32" }')

KERNELS_PY = '''\
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)
'''


def pytest_configure(config):
    # Also registered in pytest.ini; repeated here so running from another rootdir does not warn.
    config.addinivalue_line("markers", "slow: multi-second real compiles (the demo matrix and friends)")
    config.addinivalue_line("markers", "compile: needs Triton (the .venv's python); -m 'not compile' runs "
                            "the rest in seconds")
    # bench/ci_time.sh's record of where the step's time and CPU go (bench/ci_timeline.py).
    if os.environ.get("PORTCHECK_CI_TIMELINE") or "ci_timeline" in getattr(config, "workerinput", {}):
        sys.path.insert(0, str(REPO / "bench"))
        import ci_timeline
        config.pluginmanager.register(ci_timeline.recorder(config), "ci_timeline")


# What reaches Triton: the .venv's python, directly or through the fixtures built on it, or the
# environment variable naming it. A test with none of these only runs the tool on files.
_TRITON_FIXTURES = {"venv_python"}
_TRITON_NAMES = ("VENV_PYTHON", "PORTCHECK_PYTHON")


def _needs_triton(item):
    if _TRITON_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    return any(name in item.module.__dict__ for name in _TRITON_NAMES)


# The groups that take longest, longest first (wall seconds of bench/ci_time.sh's record): handed
# out first, so that they run side by side and the short ones fill in at the end, rather than one
# of them running last on one worker while the other idles. `make integration` passes
# --no-loadscope-reorder: pytest-xdist otherwise hands groups out by their number of tests.
LONGEST_GROUPS = ("triton-releases", "test_repro", "test_capture", "test_zygotes", "test_capture_inductor",
                  "test_install", "test_remote_cache", "test_fork_equivalence", "test_batches")


def _group(item):
    return item.get_closest_marker("xdist_group").args[0]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's `--dist loadgroup` (make test), each file's tests run on one worker
    and in their order, as they were written to (a file's tests may build on one another, or
    share a module fixture, a loopback port or a path); files marked with one xdist_group share
    a worker, and the Triton release environments it installs."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
        if _needs_triton(item):
            item.add_marker(pytest.mark.compile)
    items.sort(key=lambda item: LONGEST_GROUPS.index(_group(item)) if _group(item) in LONGEST_GROUPS
               else len(LONGEST_GROUPS))


def require_binary():
    if not (BINARY.is_file() and os.access(BINARY, os.X_OK)):
        pytest.fail(f"{BINARY} is missing: build it first (make build)")
    return BINARY


# One result cache and timings file per test session, never the user's. It holds the Triton
# environments bisect installs (hundreds of MiB each, gigabytes a run), so it must go when the run
# ends. An xdist worker ends without running its atexit handlers, which left every `make test` a
# few GiB in /tmp until a CI machine's disk filled: so the first process to import this module
# (the controller, before it starts any worker) makes one root that every worker's home sits in,
# and removes it when the session ends, whatever happened to the workers.
_ROOT_VAR = "PORTCHECK_ITEST_ROOT"
if not os.environ.get(_ROOT_VAR):
    os.environ[_ROOT_VAR] = tempfile.mkdtemp(prefix="portcheck-itest-home-")
    _OWNED_ROOT = os.environ[_ROOT_VAR]
    atexit.register(shutil.rmtree, _OWNED_ROOT, ignore_errors=True)
else:
    _OWNED_ROOT = None
SESSION_HOME = tempfile.mkdtemp(prefix="worker-", dir=os.environ[_ROOT_VAR])


def pytest_unconfigure(config):
    if _OWNED_ROOT:
        shutil.rmtree(_OWNED_ROOT, ignore_errors=True)


def tool_env(tag=None, **extra):
    env = dict(os.environ)
    env["TRITON_PORTCHECK_HOME"] = SESSION_HOME
    for name in ("TRITON_PORTCHECK_INJECT", "VIRTUAL_ENV", "TRITON_PORTCHECK_SHARE", "PYTHONPATH",
                 "PORTCHECK_BIN", "PORTCHECK_PYTHON"):
        env.pop(name, None)
    env[TAG_VAR] = tag or f"itest-{uuid.uuid4().hex}"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def popen_tool(args, *, cwd, env, **kwargs):
    return subprocess.Popen([str(require_binary()), *map(str, args)], cwd=str(cwd), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@dataclass
class ToolRun:
    args: list
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    tag: str

    def json(self, path):
        return json.loads(Path(path).read_text())


def run_tool(args, *, cwd, timeout=600, env=None, tag=None, **env_extra):
    tag = tag or f"itest-{uuid.uuid4().hex}"
    env = env or tool_env(tag, **env_extra)
    started = time.monotonic()
    proc = popen_tool(args, cwd=cwd, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"triton-portcheck {' '.join(map(str, args))} ran past {timeout} s\n{out}\n{err}")
    return ToolRun(list(args), proc.returncode, out, err, time.monotonic() - started, env[TAG_VAR])


def tagged_processes(tag):
    """(pid, cmdline) of every live process whose environment carries TAG_VAR=tag."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state == b"Z":
            continue
        if needle in environ.split(b"\0"):
            found.append((int(entry), cmdline))
    return found


def worker_processes_anywhere():
    """Live processes whose command line names the worker or the injected sleeping grandchild."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "portcheck_worker" in cmdline or "time.sleep(3600)" in cmdline:
            found.append((int(entry), cmdline.strip()))
    return found


def assert_no_leftovers(tag, grace_s=3.0):
    """Nothing started by the run tagged `tag` may be alive once the tool has exited."""
    deadline = time.monotonic() + grace_s
    while True:
        left = tagged_processes(tag)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not left, f"processes left behind by the run: {left}"


def write_manifest(directory, body, kernels_py=KERNELS_PY, name="portcheck.toml"):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if kernels_py is not None:
        (directory / "kernels.py").write_text(kernels_py)
    path = directory / name
    path.write_text(body)
    return path


def axpy_manifest(targets, rows=(("axpy", 1024), )):
    text = "[defaults]\ntargets = [" + ", ".join(f'"{t}"' for t in targets) + "]\n"
    for name, block in rows:
        text += (f'\n[[kernel]]\nname = "{name}"\ntarget = "kernels.py:axpy"\n'
                 f"signature = {AXPY_SIGNATURE}\nconstants = {{ BLOCK = {block} }}\n"
                 "options = { num_warps = 4 }\n")
    return text


def cells_by_position(report):
    return {(c["row"], c["target"]): c for c in report["cells"]}


@pytest.fixture(scope="session")
def binary():
    return require_binary()


@pytest.fixture(scope="session")
def venv_python():
    if not VENV_PYTHON.exists():
        pytest.fail(f"{VENV_PYTHON} is missing: create the .venv with Triton first")
    return VENV_PYTHON


_RELEASES = {}


@pytest.fixture(scope="session")
def triton_release(venv_python, tmp_path_factory):
    """`release(VERSION)`: `env add VERSION --with numpy` once per session, in the session's home
    (about 200 MB from the package index each; numpy for Triton's interpreter); returns the
    environment's python. Tests that share releases are in one xdist group, so one worker
    installs each."""

    def release(version):
        if version not in _RELEASES:
            run = run_tool(["env", "add", version, "--with", "numpy", "--python", venv_python],
                           cwd=tmp_path_factory.mktemp("env"), timeout=1800)
            assert run.returncode == 0, run.stdout + run.stderr
            _RELEASES[version] = Path(SESSION_HOME) / "envs" / version / "bin" / "python"
        return _RELEASES[version]

    return release


@pytest.fixture(scope="session")
def triton_only(venv_python, tmp_path_factory):
    """A fresh environment holding Triton and nothing else (`env add VERSION`, no --with): what a
    reproducer's reader has. Returns its python."""
    made = {}

    def environment(version):
        if version not in made:
            run = run_tool(["env", "add", version, "--python", venv_python], cwd=tmp_path_factory.mktemp("env"),
                           timeout=1800)
            assert run.returncode == 0, run.stdout + run.stderr
            made[version] = Path(SESSION_HOME) / "envs" / version / "bin" / "python"
        return made[version]

    return environment


# A third of the demo's matrix that holds a cell of every failure kind it has (cuda:75: frontend
# and MLIR errors, cuda:90: the assembler's, hip:gfx942: AMD's frontend error) and the rows that
# compile there: where two ways of running the demo are compared cell by cell.
EVERY_KIND_TARGETS = ["cuda:75", "cuda:90", "hip:gfx942"]


@dataclass
class DemoRun:
    returncode: int
    stdout: str
    stderr: str
    report: dict
    seconds: float
    json_path: Path
    home: Path  # TRITON_PORTCHECK_HOME of the run: its result cache holds every cell


@pytest.fixture(scope="session")
def demo_run(binary, venv_python):
    """`check --demo --json` once per test run: (exit code, stdout, parsed JSON) and friends. The
    pytest-xdist workers share it (the first to ask runs it, in the run's root, while the others
    wait on its lock): on two cores a second run of the same 81 cells only took their time. A
    home of its own, new: every cell really compiled (fork isolation, the default), whatever ran
    before, and what it remembers is the same whichever worker ran it. Its result cache is what
    demo_cache_home copies."""
    workdir = Path(os.environ[_ROOT_VAR]) / "demo-run"
    workdir.mkdir(exist_ok=True)
    json_path = workdir / "demo.json"
    done = workdir / "run.json"
    with open(workdir / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            run = run_tool(["check", "--demo", "--python", venv_python, "--json", json_path],
                           cwd=workdir, timeout=900, TRITON_PORTCHECK_HOME=workdir / "home")
            assert json_path.exists(), f"no JSON report written\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
            assert json.loads(json_path.read_text())["summary"]["from_cache"] == 0, run.stdout
            assert_no_leftovers(run.tag)
            done.write_text(json.dumps({"returncode": run.returncode, "stdout": run.stdout, "stderr": run.stderr,
                                        "seconds": run.seconds}))
    ran = json.loads(done.read_text())
    return DemoRun(ran["returncode"], ran["stdout"], ran["stderr"], json.loads(json_path.read_text()),
                   ran["seconds"], json_path, workdir / "home")


def demo_cache_copy(demo_run, folder):
    """A tool home at `folder` holding a copy of the demo run's result cache: `check --demo` there
    (TRITON_PORTCHECK_HOME) serves every cell from it in half a second, for tests of what is done
    with the demo's report (its formats, shards, pages) rather than of its compiles, which
    demo_run made. A copy: what a test's run stores stays its own."""
    shutil.copytree(demo_run.home, folder)
    return folder


@pytest.fixture
def demo_cache_home(demo_run, tmp_path):
    return demo_cache_copy(demo_run, tmp_path / "demo-cache-home")


@pytest.fixture
def demo_result(demo_run):
    """The brief's spelling: (exit code, stdout, parsed json)."""
    return demo_run.returncode, demo_run.stdout, demo_run.report


@pytest.fixture
def workdir(tmp_path):
    return tmp_path


@pytest.fixture
def copy_demo(tmp_path):
    """A copy of demo/ in a directory unrelated to the repository."""
    dst = tmp_path / "elsewhere" / "demo-copy"
    shutil.copytree(DEMO_DIR, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst
