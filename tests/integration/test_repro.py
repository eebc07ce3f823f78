"""`repro` (issue 30): every failing cell of the demo and of the sample package becomes a file that,
run with `python FILE` in an empty folder of a fresh environment holding only Triton, reproduces
the cell's fingerprint; --shrink, a cell that ran out of time, a kernel whose module must be
imported, and cells with nothing to reproduce. Two releases: test_releases.py."""
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import REPO, run_tool

pytestmark = [pytest.mark.slow]

# The current environment's Triton (the Makefile's TRITON_VERSION): the fresh one holds the same.
TRITON = "3.9.0"
SAMPLE = REPO / "tests" / "fixtures" / "sample_pkg"


def bare_env():
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def run_file(python, file, folder):
    """`python FILE` in `folder`, as the file's reader runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(python), str(file)], cwd=folder, capture_output=True, text=True, env=bare_env(),
                          timeout=300)


def slug(*parts):
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts))


@pytest.fixture(scope="module")
def bare_python(triton_only):
    python = triton_only(TRITON)
    # What the environment holds, as its own interpreter finds it (it has no pip of its own when
    # the invoking Python's pip installed Triton into it).
    listed = subprocess.run([str(python), "-c", "import importlib.metadata as m, json; "
                             "print(json.dumps([d.metadata['Name'] for d in m.distributions()]))"],
                            capture_output=True, text=True, env=bare_env(), timeout=120)
    names = {name.lower() for name in json.loads(listed.stdout)} - {"pip", "setuptools", "wheel"}
    assert names == {"triton"}, names
    return python


def written(folder, row, target):
    """The file `repro --failing` writes for the cell: named as `repro` names one cell's."""
    return folder / (re.sub(r"[^A-Za-z0-9]", "_", f"repro_{row}_{target}") + ".py")


def failing(report):
    return [(c["row"], c["target"], c["fingerprint"]) for c in report["cells"] if c["status"] != "ok"]


def test_every_failing_cell_of_the_demo_reproduces_its_fingerprint_with_only_triton(demo_run, bare_python,
                                                                                 tmp_path):
    cells = failing(demo_run.report)
    assert len(cells) == 18 and {fp for _, _, fp in cells} == {
        "d156103061eb", "420114423dda", "8ddebbdc3a81", "175823c2f763", "547f998e6596"}
    # The demo imports only Triton: the fresh environment writes every failing cell's file in one
    # run (--failing), and `repro` runs each there as its reader would (`python FILE` in an empty
    # folder) and judges its fingerprint; the test runs the first file of each failure group once
    # more itself.
    folder = tmp_path / "repros"
    wrote = run_tool(["repro", "--failing", "--demo", "--python", bare_python, "-o", folder], cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert "18 of 18 failing cells reproduce their fingerprint" in wrote.stdout, wrote.stdout
    files = {(row, target): written(folder, row, target) for row, target, _ in cells}
    assert sorted(folder.iterdir()) == sorted(files.values())
    firsts = {fp: (row, target) for row, target, fp in reversed(cells)}
    for row, target, fingerprint in cells:
        out = files[row, target]
        header = out.read_text().split("\n\n", 1)[0]
        assert f"fingerprint {fingerprint}" in header and f"Triton {TRITON}" in header, header
        # The command in the file writes that one cell again.
        assert f"triton-portcheck repro {shlex.quote(row)} -t {target} --demo" in header, header
        assert f"checked: python {out.name} reproduces {fingerprint}" in wrote.stdout, wrote.stdout
        if firsts[fingerprint] == (row, target):
            empty = tmp_path / f"empty-{slug(row, target)}"
            ran = run_file(bare_python, out, empty)
            assert ran.returncode == 1, ran.stdout + ran.stderr
            assert re.search(r"^reproduces: Triton ", ran.stdout, re.MULTILINE), ran.stdout
            assert not list(empty.iterdir())  # it wrote nothing where it ran
    text = files[cells[0][:2]].read_text()
    assert "@triton.jit\ndef gamma_ratio(" in text and "importlib" not in text  # copied, not imported


@pytest.fixture(scope="module")
def sample_package(tmp_path_factory, venv_python):
    """The sample package's own capture, then its check: its failing cells."""
    pkg = tmp_path_factory.mktemp("sample") / "sample_pkg"
    shutil.copytree(SAMPLE, pkg, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "portcheck.toml"))
    captured = run_tool(["capture", "--", venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=pkg,
                        timeout=300)
    assert captured.returncode == 0, captured.stdout + captured.stderr
    checked = run_tool(["check", "--python", venv_python, "--json", pkg / "check.json"], cwd=pkg)
    assert checked.returncode in (0, 1), checked.stdout + checked.stderr
    return pkg, json.loads((pkg / "check.json").read_text())


def test_every_failing_cell_of_the_sample_package_reproduces_with_only_triton(sample_package, venv_python,
                                                                            bare_python):
    pkg, report = sample_package
    cells = failing(report)
    assert {(row, target) for row, target, _ in cells} == {("row_scale_kernel", "hip:gfx942"),
                                                            ("row_scale_kernel", "hip:gfx950")}
    # Its module imports torch: the check that writes the files runs where the package does, one
    # run for both (--failing; its first pass is the fixture's check, from the result cache).
    folder = pkg / "repros"
    wrote = run_tool(["repro", "--failing", "--python", venv_python, "-o", folder], cwd=pkg)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert "2 of 2 failing cells reproduce their fingerprint" in wrote.stdout, wrote.stdout
    for row, target, fingerprint in cells:
        out = written(folder, row, target)
        text = out.read_text()
        header = text.split("\n\n", 1)[0]
        assert f"fingerprint {fingerprint}" in header and f"Triton {TRITON}" in header, header
        assert f"checked: python {out.name} reproduces {fingerprint}" in wrote.stdout, wrote.stdout
        assert "import torch" not in text
        # The target's limits as `check` held the cell to them, the register allocation unit too
        # (issue 44: the reproducer judged with a unit of 1 where `check` used the target's).
        assert "register_allocation_unit" in text
        # The bare environment, holding only Triton: `repro --verify` judges it, and its reader
        # sees the launch limit, in an empty folder that it leaves empty.
        verified = run_tool(["repro", "--verify", out, "--python", bare_python], cwd=pkg)
        assert verified.returncode == 0 and f"reproduces {fingerprint}" in verified.stdout, verified.stdout
        empty = pkg / f"empty-{slug(row, target)}"
        launched = run_file(bare_python, out, empty)
        assert launched.returncode == 1, launched.stdout + launched.stderr
        assert re.search(r"^reproduces: Triton ", launched.stdout, re.MULTILINE), launched.stdout
        assert f"needs 2048 threads per block (32 warps of 64); {target} allows 1024" in launched.stdout
        assert not list(empty.iterdir())


def test_shrink_makes_the_kernel_smaller_and_keeps_the_fingerprint(bare_python, tmp_path):
    out = tmp_path / "shrunk.py"
    run = run_tool(["repro", "rowsum_blockptr", "--demo", "-t", "cuda:90", "--shrink", "--shrink-time", "60",
                    "--python", bare_python, "-o", out], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    before, after = map(int, re.search(r"kernel's code from (\d+) to (\d+) lines", run.stdout).groups())
    assert after < before, run.stdout
    assert "reproduces 547f998e6596" in run.stdout
    assert "--shrink" in out.read_text().splitlines()[3]  # the command that wrote it (line 2: the encoding)


SLOW_KERNEL = '''import triton
import triton.language as tl


@triton.jit
def slow(x_ptr, N: tl.constexpr):
    acc = tl.load(x_ptr)
    for i in tl.static_range(N):
        acc = acc * 1.0001 + i
    tl.store(x_ptr, acc)
'''


def write_slow_row(folder, kernel_py, n, timeout):
    """slow.py's kernel `slow` as the one row of a manifest, with constant N and a time limit; the
    reproducer's path."""
    (folder / "slow.py").write_text(kernel_py)
    (folder / "portcheck.toml").write_text('[[kernel]]\nname = "slow"\ntarget = "slow.py:slow"\n'
                                           f'signature = {{ x_ptr = "*fp32:16" }}\nconstants = {{ N = {n} }}\n'
                                           f'timeout = {timeout}\n')
    return folder / "slow_repro.py"


def test_a_cell_that_ran_out_of_time_stops_at_the_same_limit(bare_python, tmp_path):
    out = write_slow_row(tmp_path, SLOW_KERNEL, 200000, 2)
    run = run_tool(["repro", "slow", "-t", "cuda:90", "--python", bare_python, "-o", out], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "not run here: the cell ran out of time (2 s)" in run.stdout
    assert "time limit:   2 s" in out.read_text()
    direct = run_file(bare_python, out, tmp_path / "empty")
    assert direct.returncode == 1 and "the cell ran out of time (2 s" in direct.stdout, direct.stdout
    verified = run_tool(["repro", "--verify", out, "--python", bare_python], cwd=tmp_path)
    assert verified.returncode == 0 and "(timeout in frontend)" in verified.stdout, verified.stdout


IMPORTED_KERNEL = '''import triton
import triton.language as tl

import repro_helpers


@triton.jit
def to_fp8(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = repro_helpers.twice(tl.load(x_ptr + offs))
    tl.store(y_ptr + offs, x.to(tl.float8e4nv))
'''


def test_what_cannot_be_copied_is_named_and_the_module_imported(venv_python, tmp_path):
    (tmp_path / "repro_helpers.py").write_text("import triton\n\n\n@triton.jit\ndef twice(x):\n    return x * 2\n")
    (tmp_path / "fp8.py").write_text(IMPORTED_KERNEL)
    (tmp_path / "portcheck.toml").write_text('[[kernel]]\nname = "to_fp8"\ntarget = "fp8.py:to_fp8"\n'
                                             'signature = { x_ptr = "*fp16:16", y_ptr = "*fp16:16" }\n'
                                             'constants = { BLOCK = 128 }\n')
    out = tmp_path / "fp8_repro.py"
    run = run_tool(["repro", "to_fp8", "-t", "cuda:80", "--python", venv_python, "-o", out], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "it imports the kernel's module" in run.stdout and "reproduces" in run.stdout
    head = out.read_text().split("\n\n", 1)[0]
    assert "copied:       not all of it; the file imports the kernel's module" in head
    assert "#                 repro_helpers: the module repro_helpers, which is neither" in head


def test_cells_with_nothing_to_reproduce_say_why(venv_python, tmp_path):
    ok = run_tool(["repro", "axpy", "--demo", "-t", "cuda:90", "--python", venv_python], cwd=tmp_path)
    assert ok.returncode == 2 and "compiles: there is no failure to reproduce" in ok.stderr, ok.stderr
    (tmp_path / "broken.py").write_text("raise RuntimeError('no GPU library here')\n")
    (tmp_path / "portcheck.toml").write_text('[[kernel]]\nname = "k"\ntarget = "broken.py:k"\n'
                                             'signature = { x = "i32" }\n')
    broken = run_tool(["repro", "k", "-t", "cuda:90", "--python", venv_python], cwd=tmp_path)
    assert broken.returncode == 2 and "does not import, so there is nothing to compile" in broken.stderr
    # --failing names what it skips and why; a run with nothing to reproduce is no error.
    every = run_tool(["repro", "--failing", "-t", "cuda:90", "--python", venv_python], cwd=tmp_path)
    assert every.returncode == 0, every.stdout + every.stderr
    assert every.stdout.splitlines() == [
        "skipped k on cuda:90: its verdict, import-error, had no compile to reproduce",
        "no cell failed in a compile: there is nothing to reproduce"], every.stdout
    assert not list(tmp_path.glob("repro_*.py"))
    for args, said in ((["--failing", "--shrink"], "--shrink makes one cell's kernel smaller"),
                       (["k", "axpy", "-t", "cuda:90"], "give one row, or --failing"),
                       (["k", "-t", "cuda:90,cuda:80"], "give one --target, or --failing"),
                       (["--failing", "-o", "-"], "--failing writes a file per cell: name a folder")):
        refused = run_tool(["repro", *args, "--python", venv_python], cwd=tmp_path)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    unknown = run_tool(["repro", "axpy", "--demo", "-t", "cuda:91", "--python", venv_python], cwd=tmp_path)
    assert unknown.returncode == 2 and "'cuda:91' is not a target" in unknown.stderr, unknown.stderr
    nowhere = run_tool(["repro", "quantize_fp8", "--demo", "-t", "cuda:80", "--python", venv_python, "-o",
                        "/proc/repro.py"], cwd=tmp_path)
    assert nowhere.returncode == 3 and "choose a folder you can write to" in nowhere.stderr, nowhere.stderr
    not_ours = tmp_path / "plain.py"
    not_ours.write_text("print('hello')\n")
    refused = run_tool(["repro", "--verify", not_ours, "--python", venv_python], cwd=tmp_path)
    assert refused.returncode == 2 and "no '# portcheck-repro:' line" in refused.stderr
