"""`env add / list / remove`: Triton releases in their own virtual environments.

These talk to the real package index (PyPI, or whatever pip is configured for). Installing 3.8.0
downloads a ~240 MB wheel, so every test shares ONE session-scoped TRITON_PORTCHECK_HOME and pip's
own cache is left on (a second download of the wheel comes from it). The tests run in file order:
add, list, add again, remove, then two concurrent adds, then remove.
"""
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import popen_tool, require_binary, run_tool, tool_env

# compile: each test installs or removes a Triton release.
pytestmark = [pytest.mark.slow, pytest.mark.compile]

VERSION = "3.8.0"


def _env_supported():
    try:
        proc = subprocess.run([str(require_binary()), "env", "--help"], capture_output=True, text=True,
                              timeout=30)
    except Exception:  # noqa: BLE001 - a missing binary is reported by require_binary's own test
        return False
    return proc.returncode == 0 and "add" in proc.stdout


@pytest.fixture(scope="session")
def envs_home(tmp_path_factory):
    if not _env_supported():
        pytest.skip("this build of triton-portcheck has no `env` subcommand")
    return tmp_path_factory.mktemp("envs-home")


def run_env(home, *args, timeout=1800):
    # Only the home is private: HOME (and with it pip's cache) stays the user's.
    return run_tool(["env", *args], cwd=home, timeout=timeout, env=tool_env(TRITON_PORTCHECK_HOME=home))


def env_folders(home):
    root = Path(home) / "envs"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def leftovers(home):
    return [name for name in env_folders(home) if name.startswith(".tmp-")]


def assert_complete(home, version):
    env = Path(home) / "envs" / version
    assert (env / "bin" / "python").exists(), env_folders(home)
    assert (env / "portcheck-env.json").is_file()
    out = subprocess.run([str(env / "bin" / "python"), "-c", "import triton; print(triton.__version__)"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == version


def test_unknown_version_is_a_usage_error_listing_real_versions(envs_home):
    run = run_env(envs_home, "add", "3.99.0", timeout=600)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "3.99.0" in run.stderr
    assert "3.9.0" in run.stderr and "3.8.0" in run.stderr, run.stderr
    assert not leftovers(envs_home)
    assert "3.99.0" not in env_folders(envs_home)


@pytest.mark.parametrize("bad", ["../x", "3.8.0/..", "", "3.8 .0", "latest"])
def test_invalid_version_is_a_usage_error(envs_home, bad):
    run = run_env(envs_home, "add", bad, timeout=60)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.seconds < 30  # rejected before pip is asked anything
    assert not (Path(envs_home) / "x").exists()


def test_add_installs_and_reports_sizes(envs_home):
    started = time.monotonic()
    run = run_env(envs_home, "add", VERSION)
    took = time.monotonic() - started
    print(f"env add {VERSION} took {took:.1f} s")
    assert run.returncode == 0, (run.stdout, run.stderr)
    text = run.stdout.lower()
    assert VERSION in run.stdout
    for word in ("wheel", "expected", "actual"):
        assert word in text, run.stdout
    # Three sizes, and the wheel alone is well over 10 MB.
    sizes = re.findall(r"(\d+(?:\.\d+)?)\s*([KMG]i?B)", run.stdout)
    assert len(sizes) >= 3, run.stdout
    assert any(unit.startswith(("M", "G")) for _, unit in sizes), run.stdout
    assert_complete(envs_home, VERSION)
    assert not leftovers(envs_home)


def test_list_shows_the_environment(envs_home):
    run = run_env(envs_home, "list", timeout=120)
    assert run.returncode == 0, run.stderr
    line = next((line for line in run.stdout.splitlines() if line.startswith(VERSION)), None)
    assert line is not None, run.stdout
    assert str(Path(envs_home) / "envs" / VERSION) in line
    assert re.search(r"\b3\.\d+\.\d+\b", line.split(VERSION, 1)[1])  # the Python version


def test_second_add_finds_it_present(envs_home):
    before = (Path(envs_home) / "envs" / VERSION / "bin" / "python").stat().st_ino
    run = run_env(envs_home, "add", VERSION, timeout=300)
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert "already" in run.stdout.lower(), run.stdout
    assert run.seconds < 60
    assert (Path(envs_home) / "envs" / VERSION / "bin" / "python").stat().st_ino == before


def test_remove_deletes_it(envs_home):
    run = run_env(envs_home, "remove", VERSION, timeout=300)
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert VERSION not in env_folders(envs_home)
    assert not leftovers(envs_home)
    listed = run_env(envs_home, "list", timeout=120)
    assert listed.returncode == 0
    assert not any(line.startswith(VERSION) for line in listed.stdout.splitlines()), listed.stdout


def test_concurrent_adds_make_one_environment(envs_home):
    env = tool_env(TRITON_PORTCHECK_HOME=envs_home)
    procs = [popen_tool(["env", "add", VERSION], cwd=envs_home, env=env) for _ in range(2)]
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=1800)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            pytest.fail("concurrent env add ran past 1800 s")
        results.append((proc.returncode, out, err))
    for code, out, err in results:
        assert code == 0, (out, err)
    # One of them installed it; the other waited on the lock and then found it there.
    assert sum("already" in out.lower() for _, out, _ in results) == 1, results
    assert [name for name in env_folders(envs_home) if not name.endswith(".lock")] == [VERSION]
    assert not leftovers(envs_home)
    assert_complete(envs_home, VERSION)


def test_remove_again_then_absent(envs_home):
    assert run_env(envs_home, "remove", VERSION, timeout=300).returncode == 0
    assert VERSION not in env_folders(envs_home)
    again = run_env(envs_home, "remove", VERSION, timeout=60)
    assert again.returncode == 2, (again.stdout, again.stderr)
    assert not leftovers(envs_home)
