"""`triton-portcheck capture`: the sample package's own pytest suite, real torch on the CPU, real
Triton, then `check` on what was captured."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from conftest import REPO, run_tool, tool_env

sys.path.insert(0, str(REPO / "bench" / "h200"))
import compare_capture  # noqa: E402  (rows as `check` reads them; also compares the H200 runs)

SAMPLE = REPO / "tests" / "fixtures" / "sample_pkg"


def copy_sample(tmp_path):
    target = tmp_path / "sample_pkg"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache",
                                                                 "portcheck.toml"))
    return target


def capture(cwd, venv_python, *extra, pytest_args=(), output=None):
    args = ["capture", *extra]
    if output is not None:
        args += ["-o", output]
    return run_tool([*args, "--", venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                     *pytest_args], cwd=cwd, timeout=300)


def rows_of(manifest_path):
    """{display name: merged row} of a manifest, as `check` reads it, `captured` included."""
    return compare_capture.rows_of(manifest_path, provenance=True)


def without_provenance(rows):
    return {name: {k: v for k, v in row.items() if k != "captured"} for name, row in rows.items()}


@pytest.fixture(scope="module")
def interpret_capture(tmp_path_factory, venv_python):
    pkg = copy_sample(tmp_path_factory.mktemp("interpret"))
    run = capture(pkg, venv_python)
    return pkg, run


@pytest.fixture(scope="module")
def record_capture(tmp_path_factory, venv_python):
    pkg = copy_sample(tmp_path_factory.mktemp("record"))
    run = capture(pkg, venv_python, "--mode", "record")
    return pkg, run


def test_interpret_mode_runs_the_tests_and_writes_rows(interpret_capture):
    pkg, run = interpret_capture
    assert run.returncode == 0, run.stderr + run.stdout
    # The package's own result checks passed in Triton's CPU interpreter.
    assert "15 passed" in run.stdout
    assert "19 distinct launch(es) of 7 kernel(s) -> 19 row(s)" in run.stderr
    rows = rows_of(pkg / "portcheck.toml")
    assert set(rows) == {
        "add_kernel[fp16]", "add_kernel[fp16-n.not16]", "add_kernel[fp32]",
        "add_kernel[fp32-n.not16]", "add_kernel[fp32-x_ptr.unaligned]",
        "scale_kernel[stride.i32]", "scale_kernel[stride=1]",
        "activation_kernel[ACTIVATION=relu]", "activation_kernel[ACTIVATION=silu]",
        "rowsum_kernel[BLOCK_N=32-EVEN_N=False]", "rowsum_kernel[BLOCK_N=32-EVEN_N=True]",
        "rowsum_kernel[BLOCK_N=64-EVEN_N=False]", "rowsum_kernel[BLOCK_N=64-EVEN_N=True]",
        "rowsum_kernel[BLOCK_N=128-EVEN_N=False]", "rowsum_kernel[BLOCK_N=128-EVEN_N=True]",
        "softmax_kernel", "bias_relu_kernel[bias_ptr.fp32]", "bias_relu_kernel[bias_ptr=None]",
        "row_scale_kernel"}
    for row in rows.values():
        assert row["target"].startswith("sample_pkg.kernels:")

    # Pointers of whole tensors are 16-byte aligned; x[1:] is not; n=1000 is not a multiple of 16.
    assert rows["add_kernel[fp32]"]["signature"] == {
        "x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16"}
    assert rows["add_kernel[fp32-x_ptr.unaligned]"]["signature"]["x_ptr"] == "*fp32"
    assert rows["add_kernel[fp32-x_ptr.unaligned]"]["signature"]["y_ptr"] == "*fp32:16"
    assert rows["add_kernel[fp16-n.not16]"]["signature"]["n"] == "i32"
    assert rows["add_kernel[fp16]"]["constants"] == {"BLOCK": 256}

    # An int argument equal to 1 becomes a constant, as the JIT specialises it.
    assert rows["scale_kernel[stride=1]"]["constants"] == {"BLOCK": 128, "stride": 1}
    assert "stride" not in rows["scale_kernel[stride=1]"]["signature"]
    assert rows["scale_kernel[stride.i32]"]["signature"]["stride"] == "i32"
    assert rows["scale_kernel[stride=1]"]["signature"]["alpha"] == "fp32"
    assert rows["scale_kernel[stride=1]"]["options"] == {"num_warps": 2}

    assert rows["activation_kernel[ACTIVATION=silu]"]["constants"]["ACTIVATION"] == "silu"

    # Every autotune config is a row, with the config's options; the heuristic inside the
    # autotuner saw each config's BLOCK_N (EVEN_N = N % BLOCK_N == 0, N = 256 or 100).
    for block, warps, stages in ((32, 1, 3), (64, 2, 3), (128, 4, 2)):
        even = rows[f"rowsum_kernel[BLOCK_N={block}-EVEN_N=True]"]
        odd = rows[f"rowsum_kernel[BLOCK_N={block}-EVEN_N=False]"]
        for row in (even, odd):
            assert row["options"] == {"num_warps": warps, "num_stages": stages, "num_ctas": 1}
            assert row["constants"]["BLOCK_N"] == block
        assert even["signature"]["N"] == "i32:16" and odd["signature"]["N"] == "i32"

    # @triton.heuristics: BLOCK_N = next_power_of_2(200).
    assert rows["softmax_kernel"]["constants"] == {"BLOCK_N": 256}
    assert rows["softmax_kernel"]["captured"] == "tests/test_ops.py::test_softmax"

    # An argument passed as None is a constant of the specialisation, like an int equal to 1.
    assert rows["bias_relu_kernel[bias_ptr=None]"]["constants"]["bias_ptr"] == {"none": True}
    assert rows["bias_relu_kernel[bias_ptr.fp32]"]["signature"]["bias_ptr"] == "*fp32:16"


def test_record_mode_equals_interpret_mode(interpret_capture, record_capture):
    """Record mode's rows are Triton's own specialisation data from jit_cache_hook; interpret
    mode derives them from the interpreter's launches. For the same launches they must agree."""
    _, interpret_run = interpret_capture
    pkg, run = record_capture
    assert run.returncode == 0, run.stderr
    assert "expected in record mode" in run.stderr  # kernels did not run, result checks failed
    interpreted = rows_of(interpret_capture[0] / "portcheck.toml")
    recorded = rows_of(pkg / "portcheck.toml")
    assert without_provenance(recorded) == without_provenance(interpreted)
    assert len(recorded) == 19


@pytest.mark.slow
def test_parallel_pytest_workers_are_captured_too(interpret_capture, tmp_path, venv_python):
    """pytest-xdist runs the tests in worker processes, each with its own records file."""
    pkg = copy_sample(tmp_path)
    run = capture(pkg, venv_python, pytest_args=["-n", "2"])
    assert run.returncode == 0, run.stderr + run.stdout
    assert "15 passed" in run.stdout
    assert without_provenance(rows_of(pkg / "portcheck.toml")) == without_provenance(
        rows_of(interpret_capture[0] / "portcheck.toml"))


@pytest.mark.slow
def test_check_compiles_the_captured_rows(interpret_capture, venv_python):
    pkg, _ = interpret_capture
    run = run_tool(["check", "--python", venv_python, "--targets", "cuda:90,hip:gfx942",
                    "--json", "report.json", "--no-cache"], cwd=pkg, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    report = run.json(pkg / "report.json")
    assert len(report["cells"]) == 38
    # Captured as cuda:90 (the default persona), row_scale's 32 warps are 2,048 threads on AMD:
    # a launch-limit verdict on NVIDIA's host choices, so not new (test_personas.py).
    not_ok = {(c["row"], c["target"], c["status"], c["new"]) for c in report["cells"] if c["status"] != "ok"}
    assert not_ok == {("row_scale_kernel", "hip:gfx942", "launch", False)}
    # The package imports torch, whose import registers at-fork handlers: its zygotes serve (one
    # such call, with a single hook, made every zygote unusable and each cell import torch itself).
    resources = report["environment"]["resources"]
    assert resources["zygotes_started"] > 0 and resources["zygotes_unusable"] == 0, resources


def test_update_keeps_hand_written_rows_comments_and_xfail(tmp_path, venv_python):
    pkg = copy_sample(tmp_path)
    first = capture(pkg, venv_python, pytest_args=["-k", "add or softmax"])
    assert first.returncode == 0, first.stderr
    manifest = pkg / "portcheck.toml"
    text = manifest.read_text()
    text = text.replace('  name      = "fp16"\n',
                        '  name      = "fp16"\n  xfail     = ["cuda:75"]  # tracked in #12\n')
    text += textwrap.dedent('''
        # Written by hand: must survive.
        [[kernel]]
        name      = "softmax_small"
        target    = "sample_pkg.kernels:softmax_kernel"
        signature = { x_ptr = "*fp32:16", out_ptr = "*fp32:16", N = "i32", stride_m = "i32" }
        constants = { BLOCK_N = 256 }
        ''')
    manifest.write_text(text)

    second = capture(pkg, venv_python, "--update")
    assert second.returncode == 0, second.stderr
    assert "1 already in the manifest, not repeated" in second.stderr
    updated = manifest.read_text()
    assert '  xfail     = ["cuda:75"]  # tracked in #12' in updated
    assert "# Written by hand: must survive." in updated
    rows = rows_of(manifest)
    assert rows["add_kernel[fp16]"]["xfail"] == ["cuda:75"]
    assert "softmax_small" in rows
    assert "softmax_kernel" not in rows  # the captured copy of the hand-written row is dropped
    assert "rowsum_kernel[BLOCK_N=128-EVEN_N=True]" in rows  # new kernels appended
    assert len([line for line in updated.splitlines() if line == 'name      = "add_kernel"']) == 1

    # The result is a manifest `check` accepts.
    static = run_tool(["check", "--python", venv_python, "--static-only", "--targets", "cuda:80"],
                      cwd=pkg, timeout=300)
    assert static.returncode == 0, static.stdout + static.stderr


def test_append_adds_only_what_is_missing(tmp_path, venv_python):
    pkg = copy_sample(tmp_path)
    first = capture(pkg, venv_python, pytest_args=["-k", "softmax"])
    assert first.returncode == 0, first.stderr
    before = (pkg / "portcheck.toml").read_text()
    again = capture(pkg, venv_python, "--append", pytest_args=["-k", "softmax or test_scale"])
    assert again.returncode == 0, again.stderr
    after = (pkg / "portcheck.toml").read_text()
    assert after.startswith(before.rstrip("\n"))
    assert "1 already in the manifest, not repeated" in again.stderr
    assert set(rows_of(pkg / "portcheck.toml")) == {
        "softmax_kernel", "scale_kernel[stride.i32]", "scale_kernel[stride=1]"}


def test_refuses_to_overwrite_and_bad_arguments(tmp_path, venv_python):
    pkg = copy_sample(tmp_path)
    (pkg / "portcheck.toml").write_text("# mine\n")
    run = capture(pkg, venv_python)
    assert run.returncode == 2
    assert "portcheck.toml exists: pass --update" in run.stderr
    assert (pkg / "portcheck.toml").read_text() == "# mine\n"

    run = run_tool(["capture"], cwd=pkg)
    assert run.returncode == 2 and "needs the command to run after `--`" in run.stderr
    run = run_tool(["capture", "-o", "new.toml", "--", "no-such-command-xyz"], cwd=pkg)
    assert run.returncode == 2 and "cannot run 'no-such-command-xyz'" in run.stderr
    run = run_tool(["capture", "-o", "new.toml", "python3", "-c", "pass"], cwd=pkg)
    assert run.returncode == 2 and "put the command after `--`" in run.stderr
    run = run_tool(["capture", "--append", "--update", "--", "true"], cwd=pkg)
    assert run.returncode == 2 and "exclude each other" in run.stderr
    assert not (pkg / "new.toml").exists()


def test_nothing_launched_writes_nothing(tmp_path, venv_python):
    run = run_tool(["capture", "--", venv_python, "-c", "import triton"], cwd=tmp_path)
    assert run.returncode == 1
    assert "launched no Triton kernel" in run.stderr
    assert "docs/capture.md" in run.stderr
    assert not (tmp_path / "portcheck.toml").exists()


def test_a_collection_error_passes_pytests_status_on_as_help_and_docs_say(tmp_path, venv_python):
    (tmp_path / "test_broken.py").write_text("import no_such_module_xyz\n")
    run = capture(tmp_path, venv_python)
    assert run.returncode == 2, run.stderr  # pytest's "interrupted: errors during collection"
    last = run.stderr.splitlines()[-1]
    assert "launched no Triton kernel" in last and last.endswith("The command's own exit status 2 is passed on.")
    assert not (tmp_path / "portcheck.toml").exists()
    usage = run_tool(["capture", "--help"], cwd=tmp_path)
    assert usage.returncode == 0
    footer = " ".join(usage.stdout.split())
    assert "1 nothing launched by a command that succeeded" in footer
    assert "a failing command's own status wins" in footer and "pytest's 2 when collection failed" in footer
    docs = " ".join((REPO / "docs" / "capture.md").read_text().split())
    assert "A failing command's own exit status wins over 0 and 1" in docs
    assert "an exit status of 2 may be pytest's as well as ours" in docs


SCRIPT = '''\
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def make_local():
    @triton.jit
    def local_kernel(dst, BLOCK: tl.constexpr):
        tl.store(dst + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))
    return local_kernel


if __name__ == "__main__":
    x = torch.arange(64, dtype=torch.int32)
    y = torch.empty_like(x)
    copy_kernel[(1, )](x, y, 64, BLOCK=64)
    assert torch.equal(x, y)
    make_local()[(1, )](torch.empty(32), BLOCK=32)
    if len(sys.argv) == 1:  # a child process is captured too
        subprocess.run([sys.executable, __file__, "child"], check=True)
    else:
        copy_kernel[(1, )](x.to(torch.float16), y.to(torch.float16), 64, BLOCK=64)
    print("MARKER", os.environ.get("USER_SITECUSTOMIZE_RAN"))
'''


def test_scripts_children_chained_sitecustomize_and_local_kernels(tmp_path, venv_python):
    (tmp_path / "script.py").write_text(SCRIPT)
    site = tmp_path / "usersite"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = 'yes'\n")
    run = run_tool(["capture", "--", venv_python, "script.py"], cwd=tmp_path,
                   PYTHONPATH=str(site))
    assert run.returncode == 0, run.stderr
    # The user's own sitecustomize still ran, in the parent and in the child.
    assert run.stdout.count("MARKER yes") == 2
    assert "local_kernel" in run.stderr and "move it to module level" in run.stderr
    rows = rows_of(tmp_path / "portcheck.toml")
    # A kernel of a __main__ script is imported by file; the child's fp16 launch is there too.
    assert set(rows) == {"copy_kernel[fp16]", "copy_kernel[i32]"}
    assert rows["copy_kernel[i32]"]["target"] == "script.py:copy_kernel"
    assert rows["copy_kernel[i32]"]["signature"] == {"src": "*i32:16", "dst": "*i32:16",
                                                     "n": "i32:16"}
    check = run_tool(["check", "--python", venv_python, "--targets", "cuda:80", "--no-cache"],
                     cwd=tmp_path, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


def test_manifest_elsewhere_gets_pythonpath(tmp_path, venv_python):
    pkg = copy_sample(tmp_path)
    out = tmp_path / "ci" / "portcheck.toml"
    out.parent.mkdir()
    run = capture(pkg, venv_python, "-q", output=out, pytest_args=["-k", "softmax"])
    assert run.returncode == 0, run.stderr
    data = tomllib.loads(out.read_text())
    assert data["defaults"]["pythonpath"] == ["../sample_pkg"]
    check = run_tool(["check", "--python", venv_python, "--targets", "cuda:80", "--no-cache"],
                     cwd=out.parent, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


def test_failing_tests_still_write_rows_and_fail_the_capture(tmp_path, venv_python):
    pkg = copy_sample(tmp_path)
    (pkg / "tests" / "test_broken.py").write_text(
        "from sample_pkg import kernels\nimport torch\n\n"
        "def test_wrong():\n    x = torch.ones(64)\n"
        "    assert kernels.add(x, x).sum() == 0\n")
    run = capture(pkg, venv_python, pytest_args=["-k", "wrong or softmax"])
    assert run.returncode == 1
    assert "the command exited with status 1" in run.stderr
    assert set(rows_of(pkg / "portcheck.toml")) == {"add_kernel", "softmax_kernel"}


TRICKY = """\
import torch
import triton
import triton.language as tl


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.jit
def apply(x_ptr, n, FN: tl.constexpr, DT: tl.constexpr, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, FN(x).to(DT).to(tl.float32), mask=offs < n)


def _impl(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


fast = triton.jit(_impl)


if __name__ == "__main__":
    x = torch.randn(64)
    apply[(1, )](x, 64, relu, tl.float16, 'q"uote', 64)
    fast[(1, )](x, 64, BLOCK=64)
"""


@pytest.mark.parametrize("mode", ["interpret", "record"])
def test_jit_function_arguments_aliases_and_a_new_output_folder(tmp_path, venv_python, mode):
    (tmp_path / "tricky.py").write_text(TRICKY)
    out = tmp_path / "out" / "nested" / "portcheck.toml"  # folders that do not exist yet
    run = run_tool(["capture", "--mode", mode, "-o", out, "--", venv_python, "tricky.py"],
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "not recorded" not in run.stderr
    rows = rows_of(out)
    assert set(rows) == {"apply", "fast"}
    # A @triton.jit function passed as a constexpr, as Triton serialises it in both modes.
    assert rows["apply"]["constants"] == {"FN": {"jit_function": "__main__:relu"}, "DT": "fp16",
                                          "S": 'q"uote', "BLOCK": 64}
    # `fast = triton.jit(_impl)`: imported by the name that holds the JIT function.
    assert rows["fast"]["target"] == "../../tricky.py:fast"
    static = run_tool(["check", "--python", venv_python, "--static-only", "-t", "cuda:80"],
                      cwd=out.parent, timeout=300)
    assert static.returncode == 0, static.stdout + static.stderr


JIT_KEYS = r'''
import glob, hashlib, json, sys
sys.path.insert(0, sys.argv[2])
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime.cache import get_cache_key
from triton._C.libtriton import get_cache_invalidating_env_vars
from portcheck_worker.base.frozen_json import convert
from portcheck_worker.base.messages import CompileRequest, KernelRef
from portcheck_worker.compile import driver, loader, stages
target = GPUTarget("cuda", 90, 32)
backend = make_backend(target)
driver.install(target)
keys = set()
for path in glob.glob(sys.argv[1] + "/*.jsonl"):
    for line in open(path):
        record = json.loads(line)
        if "kernel" not in record:  # a warning, or an autotuned launch's list of its configs
            continue
        kernel = record["kernel"]
        fn = loader.load_kernel(convert(KernelRef, {"module": kernel["module"], "function": kernel["attribute"],
                                                    "import_root": kernel["import_root"]}))
        # What the JIT compiles for this launch: its own specialisation, options for cuda:90.
        request = {"specialization": record["specialization"],
                   "target": {"backend": "cuda", "arch": "90", "warp_size": 32}}
        src, options = stages.build_source(fn, convert(CompileRequest, request))
        options = backend.parse_options(options)
        key = get_cache_key(src, backend, options, env_vars=get_cache_invalidating_env_vars())
        keys.add(hashlib.sha256(key.encode()).hexdigest())
print(json.dumps(sorted(keys)))
'''


def test_every_captured_row_compiles_under_the_key_the_jit_gives_its_launch(record_capture, tmp_path, venv_python):
    """An int that is not divisible by 16 gets an empty attribute entry from the JIT (and so does
    a constexpr); a cell that left those out compiled the same code under another key. The JIT's
    launches are recorded afresh (the capture hook in record mode, its records kept), and each one's
    compile key, as Triton computes it for cuda:90, is the key of one of check's cuda:90 cells."""
    pkg, _ = record_capture
    records, hook = tmp_path / "records", tmp_path / "hook"
    records.mkdir()
    hook.mkdir()
    (hook / "sitecustomize.py").write_text("from portcheck_worker.capture import hook\nhook.run_sitecustomize()\n")
    env = dict(os.environ, PYTHONPATH=f"{hook}:{REPO / 'python'}", PORTCHECK_CAPTURE_DIR=str(records),
               PORTCHECK_CAPTURE_MODE="record", PORTCHECK_CAPTURE_HOOK_DIR=str(hook))
    subprocess.run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=pkg, env=env,
                   capture_output=True, timeout=600)
    assert list(records.glob("*.jsonl")), "the hook recorded nothing"
    jit = subprocess.run([venv_python, "-c", JIT_KEYS, str(records), str(REPO / "python")], cwd=pkg,
                         capture_output=True, text=True, timeout=600)
    assert jit.returncode == 0, jit.stderr
    jit_keys = set(json.loads(jit.stdout.splitlines()[-1]))
    report = tmp_path / "report.json"
    run = run_tool(["check", "--manifest", pkg / "portcheck.toml", "-t", "cuda:90", "--no-cache", "--json", report,
                    "--python", venv_python], cwd=pkg, timeout=600)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    ours = {c["row"]: c["metadata"].get("hash") for c in json.loads(report.read_text())["cells"]}
    assert len(ours) == 19 and all(ours.values()), ours
    assert {row: key for row, key in ours.items() if key not in jit_keys} == {}
    assert set(ours.values()) == jit_keys


GENERATING_TEST = '''\
import importlib.util
import os
import shutil
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))  # a library elsewhere
import gen_helpers  # noqa: E402

SOURCE = """\\
import triton
import triton.language as tl


@triton.jit
def scaled_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, times(tl.load(x_ptr + offs, mask=mask), SCALE), mask=mask)
"""


def generated(scale):
    """As flag_gems does: the code written into a file at run time and loaded by path, under a
    module name that is not in sys.modules (importing it by name again is impossible), then given
    the globals of a library module: `times` is not defined in the file."""
    folder = tempfile.mkdtemp(prefix="generated-")
    path = os.path.join(folder, f"scaled_{scale}.py")
    with open(path, "w") as f:
        f.write(SOURCE.replace("SCALE", str(scale)))
    spec = importlib.util.spec_from_file_location(f"_generated_scaled_{scale}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.__dict__.update(vars(gen_helpers))
    return module.scaled_copy, folder


def test_generated_kernels():
    for scale in SCALES:
        kernel, folder = generated(scale)
        x = torch.arange(100, dtype=torch.float32)
        out = torch.empty_like(x)
        kernel[(1, )](x, out, 100, BLOCK=128)
        shutil.rmtree(folder)  # gone before capture writes the manifest: its copy is what counts
        assert torch.equal(out, x * scale)
'''


def test_kernels_generated_at_run_time_become_rows_from_a_folder_beside_the_manifest(tmp_path, venv_python):
    pkg = tmp_path / "gen_pkg"
    (pkg / "tests").mkdir(parents=True)
    (pkg / "lib").mkdir()
    (pkg / "lib" / "gen_helpers.py").write_text(
        "import triton\nimport triton.language as tl  # noqa: F401 (the interpreter wants it)\n\n\n"
        "@triton.jit\ndef times(x, s):\n    return x * s\n")
    test_file = pkg / "tests" / "test_gen.py"
    test_file.write_text("SCALES = (2, 3)\n" + GENERATING_TEST)
    run = capture(pkg, venv_python)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "left out" not in run.stderr, run.stderr
    folder = pkg / "portcheck-generated"
    files = sorted(folder.glob("gen_*.py"))
    assert len(files) == 2, list(folder.iterdir())
    assert {"SCALE" not in f.read_text() and ", 2), mask=mask)" in f.read_text() for f in files} == {True, False}
    # What the module was given at run time, as imports at the end (its lines stay where they were),
    # and the folder they come from on check's path.
    assert all(f.read_text().endswith("\nfrom gen_helpers import times as times\n") for f in files)
    manifest = tomllib.loads((pkg / "portcheck.toml").read_text())
    assert manifest["defaults"]["pythonpath"] == ["lib"]
    targets = sorted(k["target"] for k in manifest["kernel"])
    assert targets == sorted(f"portcheck-generated/{f.name}:scaled_copy" for f in files), targets
    check = run_tool(["check", "--manifest", pkg / "portcheck.toml", "-t", "cuda:90,hip:gfx942", "--python",
                      venv_python], cwd=pkg, timeout=600)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "4 cells: 4 ok" in check.stdout
    # The generator changes. --update keeps the rows of kernels this run did not reach (scale 3),
    # so their module stays; the folder holds exactly the modules the manifest names.
    test_file.write_text("SCALES = (2, 5)\n" + GENERATING_TEST)

    def named_and_present():
        named = {k["target"].split(":")[0] for k in tomllib.loads((pkg / "portcheck.toml").read_text())["kernel"]}
        return named, {f"portcheck-generated/{f.name}" for f in folder.glob("*")}

    again = capture(pkg, venv_python, "--update")
    assert again.returncode == 0, again.stdout + again.stderr
    named, present = named_and_present()
    assert len(named) == 3 and named == present
    # Captured afresh (--force): the scale-3 module is no row's any more, and goes.
    fresh = capture(pkg, venv_python, "--force")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    named, present = named_and_present()
    assert len(named) == 2 and named == present
    assert not any(", 3), mask=mask)" in f.read_text() for f in folder.glob("*"))


# As a real library's cross-entropy kernel names them: the facets that tell its rows apart made
# names of up to 279 characters there.
OPTIONAL_POINTERS = ["ce_weight_ptr", "z_loss_out_ptr", "token_accuracy_out_ptr", "predicted_tokens_out_ptr",
                     "softcap_scale_ptr", "label_smoothing_weight_ptr", "ignore_index_mask_ptr", "logits_grad_out_ptr",
                     "lse_out_ptr", "entropy_out_ptr", "logit_bias_ptr", "target_weight_ptr", "loss_scale_ptr",
                     "position_ids_ptr"]
MANY_FACETS = '''
import random

import torch
import triton
import triton.language as tl


@triton.jit
def cross_entropy(x_ptr, n, {pointers}, REDUCTION: tl.constexpr, HAS_SOFTCAP: tl.constexpr,
                  BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
{stores}
    tl.store(x_ptr + offs, x, mask=offs < n)


def optional(rng):
    if rng.random() < 0.8:  # most tests leave most optional outputs out
        return None
    t = torch.zeros(130, dtype=rng.choice([torch.bfloat16, torch.float32, torch.float16]))
    return t[1:] if rng.random() < 0.5 else t  # an unaligned pointer, or one divisible by 16


if __name__ == "__main__":  # `check` imports this file again
    rng = random.Random(3)
    for _ in range(100):
        cross_entropy[(1, )](torch.zeros(128), rng.choice([64, 63]), *[optional(rng) for _ in range({count})],
                             REDUCTION=rng.choice(["mean", "sum", "none"]), HAS_SOFTCAP=rng.random() < 0.5,
                             BLOCK=rng.choice([64, 128]))
'''.format(pointers=", ".join(OPTIONAL_POINTERS), count=len(OPTIONAL_POINTERS),
           stores="\n".join(f"    if {p} is not None:\n        tl.store({p} + offs, x, mask=offs < n)"
                            for p in OPTIONAL_POINTERS))


def test_a_kernel_with_many_facets_is_captured_under_names_check_reads_as_written(tmp_path, venv_python):
    # Issue 34: a real library's capture wrote 187 variant names longer than the 200 characters
    # `check` accepts (up to 279), and its manifest was unusable until edited by hand.
    (tmp_path / "many.py").write_text(MANY_FACETS)
    run = run_tool(["capture", "--mode", "record", "--", venv_python, "many.py"], cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "portcheck.toml").read_text()
    rows = rows_of(tmp_path / "portcheck.toml")
    assert len(rows) > 40
    assert all(len(name) <= 200 for name in rows)
    assert "\n  # " in text  # the whole description of a shortened name, beside it
    static = run_tool(["check", "--python", venv_python, "--static-only", "-t", "cuda:90", "--shard", "1/2"],
                      cwd=tmp_path, timeout=300)
    assert static.returncode == 0, static.stdout + static.stderr
    longest = max(rows, key=len)  # a shortened name, as `export` and `bisect` are given it
    one = run_tool(["export", longest, "-t", "cuda:90", "--python", venv_python, "-o", tmp_path / "out"],
                   cwd=tmp_path, timeout=300)
    assert one.returncode == 0, one.stdout + one.stderr


UNRECORDABLE = """\
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


x = torch.ones(64)
for s in (np.float32(2.0), 3.0):
    try:
        scale[(1, )](x, 64, s, BLOCK=64)
        print("launched", type(s).__name__)
    except Exception as e:
        print("raised", type(s).__name__, type(e).__name__)
"""


def test_a_launch_interpret_mode_cannot_record_is_a_warning_and_the_program_runs_as_without_capture(
        tmp_path, venv_python):
    # Issue 42: such a launch (a numpy scalar argument: Triton's JIT cannot specialise it) raised
    # AttributeError ('Recorder' object has no attribute 'warn_once') into the user's program.
    (tmp_path / "script.py").write_text(UNRECORDABLE)
    plain = subprocess.run([str(venv_python), "script.py"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, env={**tool_env(), "TRITON_INTERPRET": "1"})
    assert plain.returncode == 0, plain.stderr
    run = run_tool(["capture", "--mode", "interpret", "--", venv_python, "script.py"], cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == plain.stdout  # whatever Triton's interpreter itself does with each launch
    assert "AttributeError" not in run.stdout + run.stderr
    assert "warning: a launch of scale was not recorded: TypeError: failed to specialize" in run.stderr, run.stderr
    assert set(rows_of(tmp_path / "portcheck.toml")) == {"scale"}  # the float launch


@pytest.mark.skipif(any(Path("/dev").glob("nvidia[0-9]*")) or Path("/dev/kfd").exists() or Path("/dev/dxg").exists(),
                    reason="this machine has a GPU: live mode runs there")
def test_live_mode_without_a_gpu_says_so_before_running_the_command(tmp_path, venv_python):
    # Issue 42: it ran the whole command, then said it "launched no Triton kernel".
    (tmp_path / "script.py").write_text("open('ran', 'w').write('yes')\n")
    run = run_tool(["capture", "--mode", "live", "--", venv_python, "script.py"], cwd=tmp_path, timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    assert len(run.stderr.splitlines()) == 1 and "--mode live" in run.stderr and "--mode interpret" in run.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "portcheck.toml").exists()
