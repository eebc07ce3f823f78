"""The install a user types. pip builds the wheel from the sdist (scikit-build-core driving CMake:
what `pip install triton-portcheck-X.tar.gz` does, so the sdist is proven to build from source),
auditwheel gives it a manylinux tag, and the wheel installed into a fresh venv holding Triton runs
the demo from a folder outside the checkout, without --python and without activating the venv: the
same cells as the source build. The same build installs into another fresh venv without Triton.
One build serves the module: each costs minutes on CI's two cores. The build from the checkout
itself (`pip install .`, `pip install git+URL`) is what test_pre_commit.py's hook install does."""
import json
import subprocess

import pytest

from conftest import EVERY_KIND_TARGETS, REPO, SESSION_HOME, cells_by_position
from helpers import install

# compile: it builds and installs the tool and Triton with pip (minutes), as a user would.
pytestmark = [pytest.mark.slow, pytest.mark.compile]

TRITON = "triton==3.9.0"


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    built, _ = install.build_sdist(tmp_path_factory.mktemp("sdist"))
    return built


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    built, _ = install.build_wheel_from_sdist(sdist, out / "raw")
    repaired, show = install.auditwheel_repair(built, out / "repaired")
    return repaired, show, built


@pytest.fixture(scope="module")
def wheel_venv(wheel, tmp_path_factory):
    """A fresh venv, then the wheel with its `triton` extra: what `pip install
    "triton-portcheck[triton]"` gives a user who has no Triton yet (3.9.0, the newest the extra
    allows, as TRITON pins: the verdicts below are compared with the source build's)."""
    python = install.make_venv(tmp_path_factory.mktemp("wheel-venv") / "venv")
    install.pip_install(python, f"{wheel[0]}[triton]")
    return python.parent


def tool(bin_dir, *args, cwd, **env):
    return subprocess.run([str(bin_dir / "triton-portcheck"), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=900, env=install.clean_env(TRITON_PORTCHECK_HOME=SESSION_HOME, **env))


def verdicts(report):
    return {pos: (c["status"], c["kind"], c["stage"], c["fingerprint"])
            for pos, c in cells_by_position(report).items()}


def test_wheel_is_manylinux_and_self_contained(wheel):
    repaired, show, _ = wheel
    # Debian 12's toolchain (glibc 2.36) gives manylinux_2_34: pthread and __libc_start_main moved
    # into libc at 2.34, so no build on this machine can go lower (docs/install.md).
    assert "-py3-none-manylinux_2_34_x86_64" in repaired.name, repaired.name
    assert '"manylinux_2_34_x86_64"' in show, show
    names = install.wheel_files(repaired)
    data = [n for n in names if ".data/" in n]
    for needed in ("scripts/triton-portcheck", "scripts/triton-portcheck-pre-commit",
                   "data/share/triton-portcheck/python/portcheck_worker/__main__.py",
                   "data/share/triton-portcheck/data/known-failures.toml",
                   "data/share/triton-portcheck/data/launch-limits.toml",
                   "data/share/triton-portcheck/demo/kernels.py",
                   "data/share/triton-portcheck/demo/portcheck.toml"):
        assert any(n.endswith(needed) for n in data), f"{needed} missing from {repaired.name}"
    # No shared library was grafted in: the binary needs nothing beyond glibc.
    assert not [n for n in names if ".libs/" in n], names


def test_installed_binary_needs_only_glibc_and_no_build_paths(wheel_venv):
    binary = wheel_venv / "triton-portcheck"
    needed = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    libraries = set(line.split("[")[1].split("]")[0] for line in needed.splitlines() if "(NEEDED)" in line)
    assert libraries <= {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}, libraries
    assert str(REPO).encode() not in binary.read_bytes(), "a path of the build machine is compiled in"


def test_one_version_everywhere(wheel_venv, tmp_path):
    expected = install.version_in_cmakelists()
    printed = tool(wheel_venv, "--version", cwd=tmp_path).stdout.strip()
    assert printed.endswith(expected), printed
    metadata = subprocess.run([str(wheel_venv / "python"), "-c",
                               "import importlib.metadata as m; print(m.version('triton-portcheck'))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert metadata == expected


def test_the_triton_extra_installs_a_supported_triton_and_the_licence_is_apache(wheel_venv, wheel):
    """Issue 51: `[triton]` brings a Triton the tool supports into the same environment, and the
    wheel says Apache-2.0 where a scanner reads it."""
    found = subprocess.run([str(wheel_venv / "python"), "-c", "import triton; print(triton.__version__)"],
                           capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == TRITON.split("==")[1]
    metadata = subprocess.run([str(wheel_venv / "python"), "-c",
                               "import importlib.metadata as m; print(m.metadata('triton-portcheck').as_string())"],
                              capture_output=True, text=True, check=True).stdout
    assert "License-Expression: Apache-2.0" in metadata
    assert "Requires-Dist: triton<3.10,>=3.0; extra == \"triton\"" in metadata, metadata
    assert any(name.endswith("licenses/LICENSE") or name.endswith("/LICENSE")
               for name in install.wheel_files(wheel[0]))
    targets = tool(wheel_venv, "targets", cwd=wheel_venv)  # the installed environment's Triton
    assert targets.returncode == 0 and str(wheel_venv / "python") in targets.stdout, targets.stderr


def test_a_venv_without_triton_is_told_to_install_it_there(wheel, tmp_path):
    """Installed into a venv with no Triton and run without activating it, the tool falls back
    to python3 on PATH; the fix it gives is for its own environment, which it would then use."""
    python = install.make_venv(tmp_path / "venv")
    install.pip_install(python, wheel[0])
    run = tool(python.parent, "targets", cwd=tmp_path)
    if run.returncode == 0:
        pytest.skip("python3 on PATH has Triton here: nothing is missing")
    assert run.returncode == 3, run.stderr
    assert f"`{python} -m pip install triton`" in run.stderr, run.stderr


def test_installed_demo_matches_the_source_build(wheel_venv, demo_run, tmp_path):
    """No --python, no activation, a folder outside the checkout: the venv the tool is installed in
    holds Triton, so that is the interpreter; every cell of the targets that hold each failure
    kind of the demo agrees with the source build's report."""
    out = tmp_path / "demo.json"
    run = tool(wheel_venv, "check", "--demo", "--no-cache", "-t", ",".join(EVERY_KIND_TARGETS), "--json", out,
               cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(out.read_text())
    source = {**demo_run.report, "cells": [c for c in demo_run.report["cells"] if c["target"] in EVERY_KIND_TARGETS]}
    assert {c["kind"] for c in source["cells"]} == {c["kind"] for c in demo_run.report["cells"]}
    assert len(report["cells"]) == len(source["cells"]) == 27
    assert verdicts(report) == verdicts(source)
    assert report["tool"]["version"] == install.version_in_cmakelists()
    assert report["environment"]["python"]["executable"].startswith(str(wheel_venv.parent))

    targets = tool(wheel_venv, "targets", cwd=tmp_path)
    assert targets.returncode == 0, targets.stderr
    assert str(wheel_venv / "python") in targets.stdout
    assert "hip:gfx942" in targets.stdout and "cuda:90" in targets.stdout

    # The installed worker writes reproducers too (its harness, compile/portable.py, is read from
    # the installed share folder).
    repro = tool(wheel_venv, "repro", "rowsum_blockptr", "--demo", "-t", "cuda:90", "-o", tmp_path / "r.py",
                 cwd=tmp_path)
    assert repro.returncode == 0 and "reproduces 547f998e6596" in repro.stdout, repro.stdout + repro.stderr


def test_virtual_env_and_python_flag_win_over_the_installed_environment(wheel_venv, venv_python, tmp_path):
    via_flag = tool(wheel_venv, "targets", "--python", venv_python, cwd=tmp_path)
    assert via_flag.returncode == 0 and str(venv_python) in via_flag.stdout, via_flag.stderr
    via_env = tool(wheel_venv, "targets", cwd=tmp_path, VIRTUAL_ENV=venv_python.parent.parent)
    assert via_env.returncode == 0 and str(venv_python) in via_env.stdout, via_env.stderr


def test_sdist_builds_from_source_into_a_fresh_venv(tmp_path, demo_run, wheel, wheel_venv):
    # The wheel pip built from the sdist, before auditwheel: what `pip install SDIST` installs.
    python = install.make_venv(tmp_path / "venv")
    install.pip_install(python, wheel[2])
    bin_dir = python.parent
    assert tool(bin_dir, "--version", cwd=tmp_path).stdout.strip().endswith(install.version_in_cmakelists())
    # This venv has no Triton: the tool must be pointed at one, and then agrees with the source build.
    out = tmp_path / "demo.json"
    run = tool(bin_dir, "check", "--demo", "-t", "cuda:90,hip:gfx942", "--python", wheel_venv / "python",
               "--json", out, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    subset = {pos: v for pos, v in verdicts(demo_run.report).items() if pos[1] in ("cuda:90", "hip:gfx942")}
    assert verdicts(json.loads(out.read_text())) == subset
    missing = tool(bin_dir, "targets", cwd=tmp_path, PATH="/usr/bin:/bin")
    assert missing.returncode == 3 and "triton" in missing.stderr.lower(), missing.stderr


def documented_commands(document):
    """The `triton-portcheck ...` command lines of a document's code blocks, as written (a line
    continued with a backslash joined to the next; a shell comment after it dropped)."""
    commands, pending, in_block = [], "", False
    for line in (REPO / document).read_text().splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        text = line.strip()
        for prefix in ("- run: ", "run: ", "- ", "$ "):
            text = text[len(prefix):] if text.startswith(prefix) else text
        if pending:
            text, pending = pending + " " + text, ""
        if not in_block or not text.startswith("triton-portcheck "):
            continue
        if text.endswith("\\"):
            pending = text[:-1].strip()
            continue
        commands.append(text.split("  #")[0].strip())
    return commands


def test_the_documented_ci_commands_run_as_written_outside_the_checkout(wheel_venv, tmp_path):
    """Issue 42: reports into relative folders that did not exist yet were refused, which broke
    the README's first check command outside a checkout and docs/ci.md's shard jobs. Here the
    installed tool runs each command of docs/ci.md as written, in a project folder of its own (the
    demo's kernels) where the shard jobs' artifacts lie as download-artifact leaves them."""
    project = tmp_path / "project"
    subprocess.run(["cp", "-r", str(REPO / "demo"), str(project)], check=True)
    env = dict(install.clean_env(TRITON_PORTCHECK_HOME=SESSION_HOME))
    env["PATH"] = f"{wheel_venv}:{env.get('PATH', '')}"

    def shell(command):
        return subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, timeout=900,
                              env=env)

    first = shell("triton-portcheck check --demo --json build/demo-report.json")  # the README's, installed
    assert first.returncode == 1 and (project / "build" / "demo-report.json").is_file(), first.stderr
    for k in range(1, 5):  # what each shard job's action uploads and download-artifact lays out
        shard = shell(f"triton-portcheck check --shard {k}/4 --json portcheck-shard-{k}/report.json")
        assert shard.returncode in (0, 1) and (project / f"portcheck-shard-{k}" / "report.json").is_file(), \
            shard.stderr
    commands = documented_commands("docs/ci.md")
    assert any(c.startswith("triton-portcheck merge portcheck-shard-*/report.json") for c in commands), commands
    for command in commands:
        if "--baseline" in command and not (project / "portcheck-baseline.json").exists():
            shell("triton-portcheck check --write-baseline portcheck-baseline.json")
        run = shell(command)
        # 1: the demo's failures are new where no baseline covers them; never 2 (a path refused).
        assert run.returncode in (0, 1), (command, run.stdout[-2000:], run.stderr)
        if "--baseline" in command:
            assert run.returncode == 0, (command, run.stdout[-2000:], run.stderr)
