"""The pre-commit hook under the real pre-commit, as a user's .pre-commit-config.yaml names it:
pre-commit installs the tool from this repository with pip (`language: python`), and every form the
docs show (no args, `args: [--targets, "..."]`, PORTCHECK_HOOK_COMPILE=1, PORTCHECK_MANIFEST)
reaches the tool as written."""
import os
import shutil
import subprocess

import pytest
import yaml

from conftest import REPO, VENV_PYTHON, tool_env, write_manifest
from test_ci import GAMMA, GAMMA_ROW, MANIFEST

pytestmark = pytest.mark.slow

GIT_IDENTITY = dict(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")


def git(*args, cwd, env=None):
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This working tree as pre-commit clones it: a git repository whose one commit holds every file
    git would commit here (what `pre-commit try-repo` does with uncommitted changes)."""
    dst = tmp_path_factory.mktemp("hook-repo")
    for name in git("ls-files", "-co", "--exclude-standard", "-z", cwd=REPO).split("\0"):
        if name and (REPO / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dst / name)
    env = {**os.environ, **GIT_IDENTITY}
    git("init", "-q", cwd=dst)
    git("add", "-A", cwd=dst)
    git("commit", "-qm", "snapshot", cwd=dst, env=env)
    return dst, git("rev-parse", "HEAD", cwd=dst)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    # One home for the module: pre-commit builds the hook's environment (a pip source build of the
    # tool) once and reuses it for every config below, as on a developer's machine.
    return tmp_path_factory.mktemp("pre-commit-home")


def user_repo(path, hook_repo, hook_lines, manifest, manifest_name="portcheck.toml"):
    repo, rev = hook_repo
    write_manifest(path, manifest, kernels_py=GAMMA, name=manifest_name)
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [{"id": "triton-portcheck", **hook_lines}]}]}
    (path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, **GIT_IDENTITY}
    git("init", "-q", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-qm", "kernels", cwd=path, env=env)
    return path


def pre_commit_run(project, home, **extra_env):
    """`pre-commit run --all-files` from a shell whose venv (with Triton) is activated."""
    venv = VENV_PYTHON.parent.parent
    env = tool_env(PRE_COMMIT_HOME=home, VIRTUAL_ENV=venv, PATH=f"{venv / 'bin'}:{os.environ['PATH']}",
                   **GIT_IDENTITY, **extra_env)
    return subprocess.run([str(VENV_PYTHON.parent / "pre-commit"), "run", "--all-files", "--verbose"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=1500)


def test_hook_definition_is_a_python_hook_built_from_pyproject():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hooks[0]["id"] == "triton-portcheck" and hooks[0]["language"] == "python"
    assert (REPO / "pyproject.toml").exists()
    # The documented config is the one tested below.
    assert 'args: [--targets, "cuda:80,cuda:90,hip:gfx942"]' in (REPO / "docs" / "ci.md").read_text()


def test_documented_args_reach_the_tool(hook_repo, pre_commit_home, tmp_path):
    # The manifest lists cuda:80 alone, where gamma compiles; gamma calls tgamma, which the HIP
    # libdevice lacks, so the hook fails only if the --targets of args reached the tool.
    cuda_only = MANIFEST.replace('targets = ["cuda:80", "hip:gfx942"]', 'targets = ["cuda:80"]')
    assert cuda_only != MANIFEST
    project = user_repo(tmp_path / "documented", hook_repo, {"args": ["--targets", "cuda:80,cuda:90,hip:gfx942"]},
                        cuda_only + GAMMA_ROW)
    run = pre_commit_run(project, pre_commit_home)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Failed" in run.stdout and "tgamma" in run.stdout and "hip:gfx942" in run.stdout
    assert "required" not in run.stdout + run.stderr


def test_no_args_uses_the_manifest_and_passes(hook_repo, pre_commit_home, tmp_path):
    project = user_repo(tmp_path / "plain", hook_repo, {}, MANIFEST)
    run = pre_commit_run(project, pre_commit_home)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout


def test_compile_mode_and_another_manifest(hook_repo, pre_commit_home, tmp_path):
    project = user_repo(tmp_path / "compile", hook_repo, {"args": ["--targets=cuda:90"]}, MANIFEST,
                        manifest_name="kernels.toml")
    run = pre_commit_run(project, pre_commit_home, PORTCHECK_HOOK_COMPILE=1, PORTCHECK_MANIFEST="kernels.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout
