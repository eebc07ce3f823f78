"""Issue 42, item 5: `repro -o` writes where reports are written: `-` is standard output, a FIFO or a
device is written into as it is, a symbolic link is followed (the link stays, its target gets the
file, executable), never replaced by a regular file. The file is checked before it is delivered, once.

No test here names /dev/stdout or /dev/null themselves: run as root against a tool that renames over
its destination, that would replace the machine's own. A link to /proc/self/fd/1 (what /dev/stdout
is) and a character device made in the test's folder stand for them."""
import os
import select
import stat
import subprocess
import time

import pytest

from conftest import popen_tool, run_tool, tool_env

pytestmark = [pytest.mark.slow]

ROW = ["quantize_fp8", "--demo", "-t", "cuda:80"]  # a frontend failure: quick to write and check
FINGERPRINT = "420114423dda"


def looks_like_the_reproducer(text):
    return (text.startswith("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n")
            and f'# portcheck-repro: {{"fingerprint": "{FINGERPRINT}"' in text
            and text.endswith('sys.exit(reproduce(KERNEL, CELL, RECORDED, sys.argv[1:]))\n'))


def test_dash_writes_the_file_to_standard_output_and_says_the_rest_on_stderr(venv_python, tmp_path):
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", "-"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert looks_like_the_reproducer(run.stdout), run.stdout[:300]
    assert f"reproduces {FINGERPRINT}" in run.stderr and "wrote the reproducer to standard output" in run.stderr
    assert list(tmp_path.iterdir()) == []  # no file named "-", nothing else


def test_a_link_to_our_standard_output_is_standard_output(venv_python, tmp_path):
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")  # what /dev/stdout is
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", link], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert looks_like_the_reproducer(run.stdout), run.stdout[:300]


def test_a_fifo_is_written_into_once(venv_python, tmp_path):
    fifo = tmp_path / "repro.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open before the tool: its open does not wait
    proc = popen_tool(["repro", *ROW, "--python", venv_python, "-o", fifo], cwd=tmp_path, env=tool_env())
    chunks, deadline = [], time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ended = proc.poll() is not None  # before the read: what it wrote is in the pipe by then
            chunk = os.read(reader, 1 << 16) if select.select([reader], [], [], 0.1)[0] else b""
            chunks.append(chunk)
            if ended and not chunk:
                break
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(reader)
    assert proc.returncode == 0, out + err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    text = b"".join(chunks).decode()
    assert looks_like_the_reproducer(text), text[:300]
    assert text.count("#!/usr/bin/env python3") == 1
    assert f"wrote {fifo} (" in out and f"reproduces {FINGERPRINT}" in out


def test_a_link_is_followed_and_its_target_made_executable(venv_python, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "repro.py"
    link.symlink_to("elsewhere/target.py")
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", link], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert link.is_symlink() and os.readlink(link) == "elsewhere/target.py"
    target = tmp_path / "elsewhere" / "target.py"
    assert looks_like_the_reproducer(target.read_text())
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "repro.py"]  # no temporary file left
    ran = subprocess.run([str(venv_python), str(link)], cwd=tmp_path / "elsewhere", capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 1 and ran.stdout.startswith("reproduces: "), ran.stdout + ran.stderr


def test_a_character_device_is_written_into(venv_python, tmp_path):
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers
        os.close(os.open(device, os.O_WRONLY))
    except OSError as e:  # not root, or a filesystem mounted nodev
        pytest.skip(f"cannot make a usable character device here: {e}")
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", device], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode), "the device was replaced by a regular file"
    assert f"reproduces {FINGERPRINT}" in run.stdout
