"""Issue 42, item 7: a reproducer's limits are the cell's. `repro --timeout` takes what check takes
(-1 and nan lifted the row's limit); a header's time_limit_s or max_rss_bytes that the supervisor
cannot enforce is refused with the file, line and key (a time_limit_s of -5, "2" or 1e300 ran the
file unbounded); and a cell that ran out of memory carries its memory limit, so that `repro`, `repro
--verify` and `python FILE` stop its compile there too instead of saying it compiles."""
import json
import re
import subprocess

import pytest

from conftest import run_tool
from test_repro import write_slow_row

pytestmark = [pytest.mark.slow]

ROW = ["quantize_fp8", "--demo", "-t", "cuda:80"]  # a frontend failure: quick to write and check


@pytest.mark.parametrize("flag, value", [("--timeout", "-1"), ("--timeout", "nan"), ("--timeout", "0"),
                                         ("--timeout", "inf"), ("--timeout", " 2"), ("--max-rss", "0"),
                                         ("--max-rss", "lots")])
def test_repro_refuses_limits_check_refuses(venv_python, tmp_path, flag, value):
    run = run_tool(["repro", *ROW, "--python", venv_python, f"{flag}={value}"], cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith(f"triton-portcheck: {flag}"), run.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.fixture(scope="module")
def written(venv_python, tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    out = folder / "repro.py"
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", out], cwd=folder)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


@pytest.mark.parametrize("key, value", [("time_limit_s", "-5"), ("time_limit_s", '"2"'), ("time_limit_s", "1e300"),
                                        ("time_limit_s", "0"), ("max_rss_bytes", "-1"), ("max_rss_bytes", "1.5"),
                                        ("max_rss_bytes", '"1GiB"'), ("max_rss_bytes", "0")])
def test_verify_refuses_a_header_limit_it_cannot_enforce(written, venv_python, tmp_path, key, value):
    lines = written.read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if line.startswith("# portcheck-repro: "))
    header = json.loads(lines[number][len("# portcheck-repro: "):])
    header[key] = "@@"
    lines[number] = "# portcheck-repro: " + json.dumps(header).replace('"@@"', value) + "\n"
    edited = tmp_path / "edited.py"
    edited.write_text("".join(lines))
    run = run_tool(["repro", "--verify", edited, "--python", venv_python], cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{edited}:{number + 1}: key '{key}': " in run.stderr, run.stderr


GREEDY = '''import triton
import triton.language as tl


@triton.constexpr_function
def hoard(size):
    held = b"\\x01" * size  # every page written: resident, not only reserved
    spin = 0
    while spin < 20000000:  # held a second or two, long enough for any sampling to see it
        spin += 1
    return len(held) % 7 + 1


@triton.jit
def greedy(x_ptr, SIZE: tl.constexpr):
    tl.store(x_ptr, tl.load(x_ptr) * hoard(SIZE))
'''


def test_a_cell_out_of_memory_carries_its_limit_and_reproduces(venv_python, tmp_path):
    (tmp_path / "greedy.py").write_text(GREEDY)
    (tmp_path / "portcheck.toml").write_text('[[kernel]]\nname = "greedy"\ntarget = "greedy.py:greedy"\n'
                                             'signature = { x_ptr = "*fp32:16" }\n'
                                             f'constants = {{ SIZE = {1 << 30} }}\nmax_rss = "400MiB"\n')
    out = tmp_path / "greedy_repro.py"
    run = run_tool(["repro", "greedy", "-t", "cuda:90", "--python", venv_python, "-o", out], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    fingerprint = re.search(r"reproduces (\w{12}) \(oom in frontend\)", run.stdout)
    assert fingerprint, run.stdout
    text = out.read_text()
    assert '"max_rss_bytes": 419430400' in text and "# memory limit: 400 MiB for the compile's processes" in text
    # Its reader's run: stopped at the limit, in the stage the cell was in.
    empty = tmp_path / "empty"
    empty.mkdir()
    direct = subprocess.run([str(venv_python), str(out)], cwd=empty, capture_output=True, text=True, timeout=300)
    assert direct.returncode == 1, direct.stdout + direct.stderr
    assert "reproduces: Triton 3.9.0 for cuda:90 exceeded the memory limit (400 MiB) in stage frontend" \
        in direct.stdout, direct.stdout
    verified = run_tool(["repro", "--verify", out, "--python", venv_python], cwd=tmp_path)
    assert verified.returncode == 0 and f"reproduces {fingerprint.group(1)}" in verified.stdout, verified.stdout
    # The same cell with room enough compiles: the limit, not the kernel, is what reproduces.
    roomy = run_tool(["repro", "greedy", "-t", "cuda:90", "--python", venv_python, "--max-rss", "8GiB"],
                     cwd=tmp_path)
    assert roomy.returncode == 2 and "compiles: there is no failure to reproduce" in roomy.stderr, roomy.stderr


def test_check_parses_the_timeout_as_repro_does(venv_python, tmp_path):
    run = run_tool(["check", "--demo", "--python", venv_python, "--timeout= 2"], cwd=tmp_path)
    assert run.returncode == 2 and "--timeout: ' 2' is not a number of seconds" in run.stderr, run.stderr


def test_o_never_replaces_a_read_only_file_nor_changes_a_files_mode(venv_python, tmp_path):
    """Issue 50: -o onto a read-only file replaced it and made it executable."""
    kept = tmp_path / "kept.py"
    kept.write_text("keep me\n")
    kept.chmod(0o444)
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", kept], cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip() == f"triton-portcheck: -o {kept}: is read-only; nothing was written"
    assert kept.read_text() == "keep me\n" and kept.stat().st_mode & 0o777 == 0o444
    private = tmp_path / "private.py"
    private.write_text("old\n")
    private.chmod(0o600)
    run = run_tool(["repro", *ROW, "--python", venv_python, "-o", private], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert private.read_text().startswith("#!/usr/bin/env python3") and private.stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "fresh.py"
    assert run_tool(["repro", *ROW, "--python", venv_python, "-o", fresh], cwd=tmp_path).returncode == 0
    assert fresh.stat().st_mode & 0o777 == 0o755


SLOW = '''import triton
import triton.language as tl


@triton.constexpr_function
def ponder(n):
    spin = 0
    while spin < 2000000000:  # a minute or more: far past the limit below, and bounded all the same
        spin += 1
    return n


@triton.jit
def slow(x_ptr, N: tl.constexpr):
    tl.store(x_ptr, tl.load(x_ptr) * ponder(N))
'''


def test_a_timeout_reproducer_verifies_by_its_kind_and_needs_its_limit(venv_python, tmp_path):
    """Issue 50: a fresh reproducer of a timeout failed its own --verify when the limit struck in
    another stage (that depends on the load), and a header without the limit ran with none."""
    out = write_slow_row(tmp_path, SLOW, 2, 3)
    run = run_tool(["repro", "slow", "-t", "cuda:90", "--python", venv_python, "-o", out], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    verified = run_tool(["repro", "--verify", out, "--python", venv_python], cwd=tmp_path)
    assert verified.returncode == 0 and "reproduces" in verified.stdout, verified.stdout + verified.stderr
    lines = out.read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if line.startswith("# portcheck-repro: "))
    header = json.loads(lines[number][len("# portcheck-repro: "):])
    assert header["kind"] == "timeout" and header["time_limit_s"] == 3
    # Recorded where another machine's load let the compile get: the kind is what reproduces.
    lines[number] = "# portcheck-repro: " + json.dumps({**header, "stage": "ttgir", "fingerprint": "0123456789ab"}) + "\n"
    out.write_text("".join(lines))
    elsewhere = run_tool(["repro", "--verify", out, "--python", venv_python], cwd=tmp_path)
    assert elsewhere.returncode == 0 and "reproduces" in elsewhere.stdout, elsewhere.stdout + elsewhere.stderr
    header["time_limit_s"] = None
    lines[number] = "# portcheck-repro: " + json.dumps(header) + "\n"
    out.write_text("".join(lines))
    refused = run_tool(["repro", "--verify", out, "--python", venv_python], cwd=tmp_path)
    assert refused.returncode == 2
    assert f"{out}:{number + 1}: key 'time_limit_s': a reproducer of a timeout needs the cell's time limit" \
        in refused.stderr, refused.stderr
