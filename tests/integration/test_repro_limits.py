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

pytestmark = [pytest.mark.slow]

ROW = ["quantize_fp8", "--demo", "-t", "cuda:80"]  # a frontend failure: quick to write and check


@pytest.mark.parametrize("flag, value", [("--timeout", "-1"), ("--timeout", "nan"), ("--timeout", "0"),
                                         ("--timeout", "inf"), ("--max-rss", "0"), ("--max-rss", "lots")])
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
