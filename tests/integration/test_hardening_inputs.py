"""Bad input and user faults (issue 14, items 5 and 6): targets the installed Triton cannot compile
for, row names that would leave the output folder or share one, and the user's mistakes that were
blamed on the tool (internal-error). Each was reproduced before its fix."""
import json
import os
from pathlib import Path

import pytest

from conftest import AXPY_SIGNATURE, axpy_manifest, cells_by_position, run_tool, write_manifest

pytestmark = pytest.mark.slow


def axpy_row(name, extra="", target="kernels.py:axpy"):
    return (f'\n[[kernel]]\nname = "{name}"\ntarget = "{target}"\nsignature = {AXPY_SIGNATURE}\n'
            f"constants = {{ BLOCK = 1024 }}\n{extra}")


def check(args, venv_python, cwd, timeout=300):
    return run_tool(["check", "--python", venv_python, "--no-cache", *args], cwd=cwd, timeout=timeout)


def one_error_line(run):
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    return lines[0]


# ---- item 5: targets -----------------------------------------------------------------------


@pytest.mark.parametrize("target, words", [
    ("cuda:999", ["'cuda:999' is not a target the installed Triton", "sm_999a", "valid targets: cuda:"]),
    ("cuda:0", ["'cuda:0' is not a target the installed Triton", "sm_0"]),
    ("hip:gfx1", ["'hip:gfx1' is not a target the installed Triton", "gfx1 is not an AMD GPU processor",
                  # the 21 processors 3.9.0's AMD backend lowers to: short enough to list them all
                  "valid targets: hip:gfx906, hip:gfx908"]),
    # Known to CUDA, but this Triton assembles capability 88 with a ptxas that lacks sm_88
    # (it used to end in LLVM's fatal error, reported as our internal error).
    ("cuda:88", ["'cuda:88' is a CUDA architecture, but the installed Triton", "does not know sm_88"]),
    # An LLVM processor Triton's AMD backend does not lower to: it compiled and failed every cell.
    ("hip:gfx803", ["'hip:gfx803' is an AMD architecture, but the installed Triton",
                    "its AMD backend refuses it (unsupported target: 'gfx803')", "valid targets: hip:gfx906,"]),
])
def test_a_target_triton_cannot_compile_for_is_exit_2_naming_the_flag(venv_python, tmp_path, target, words):
    manifest = write_manifest(tmp_path, axpy_manifest(["cuda:80"]))
    json_path = tmp_path / "out.json"
    run = check(["--manifest", manifest, "-t", f"cuda:80,{target}", "--json", json_path], venv_python, tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    line = one_error_line(run)
    assert line.startswith("triton-portcheck: --targets: "), line
    for w in words:
        assert w in line, line
    assert not json_path.exists()


def test_a_manifest_target_names_its_file_line_and_key(venv_python, tmp_path):
    body = '[defaults]\ntargets = ["cuda:80", "hip:gfx1"]\n' + axpy_row("axpy") + axpy_row(
        "other", 'targets = ["cuda:999"]\n')
    manifest = write_manifest(tmp_path, body)
    run = check(["--manifest", manifest], venv_python, tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    line = one_error_line(run)
    # The first unknown column is hip:gfx1, from [defaults] (line 2).
    assert f"{manifest}:2: defaults.targets: 'hip:gfx1' is not a target" in line, line
    (tmp_path / "portcheck.toml").write_text('[defaults]\ntargets = ["cuda:80"]\n' + axpy_row(
        "other", 'targets = ["cuda:999"]\n'))
    run = check(["--manifest", manifest], venv_python, tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{manifest}:9: kernel 'other'.targets: 'cuda:999' is not a target" in one_error_line(run)


def test_targets_command_refuses_an_unknown_target(venv_python, tmp_path):
    run = run_tool(["targets", "--python", venv_python, "-t", "cuda:90,hip:gfx1"], cwd=tmp_path, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--targets: 'hip:gfx1' is not a target the installed Triton" in one_error_line(run)
    good = run_tool(["targets", "--python", venv_python, "-t", "cuda:90,cuda:50,hip:gfx942"], cwd=tmp_path,
                    timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr


# ---- item 5: folder names ------------------------------------------------------------------


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file())


def test_names_dot_and_dotdot_stay_inside_the_output_folder(venv_python, tmp_path):
    """`.` and `..` as row names wrote export -o and --save-ir files beside or above the folder."""
    work = tmp_path / "work"
    manifest = write_manifest(work, '[defaults]\ntargets = ["cuda:80"]\n' + axpy_row(".") + axpy_row(".."))
    out = work / "nest" / "out"
    ir = work / "nest" / "ir"
    run = run_tool(["export", "--manifest", manifest, "--python", venv_python, "-t", "cuda:80", "-o", out],
                   cwd=work, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    run = check(["--manifest", manifest, "--save-ir", ir], venv_python, work)
    assert run.returncode == 0, run.stdout + run.stderr
    # Nothing outside the two folders, every file inside one of them, one folder per row.
    outside = [f for f in files_under(work) if not f.startswith(("nest/out/", "nest/ir/"))]
    assert sorted(outside) == ["kernels.py", "portcheck.toml"], outside
    assert len({Path(f).parts[0] for f in files_under(out)}) == 2, files_under(out)
    assert len({Path(f).parts[1] for f in files_under(ir)}) == 2, files_under(ir)


def test_rows_whose_names_look_alike_get_their_own_folders(venv_python, tmp_path):
    """`scale[b]` and `scale-b` exported to one folder, the second overwriting the first."""
    body = ('[defaults]\ntargets = ["cuda:80"]\n' + axpy_row("scale-b", "options = { num_warps = 2 }\n")
            + axpy_row("scale", "[[kernel.variant]]\nname = \"b\"\noptions = { num_warps = 8 }\n"))
    manifest = write_manifest(tmp_path, body)
    out = tmp_path / "out"
    run = run_tool(["export", "--manifest", manifest, "--python", venv_python, "-t", "cuda:80", "-o", out],
                   cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    descriptors = sorted(out.rglob("launch.json"))
    # Three rows: scale-b (2 warps), scale (the default 4) and scale[b] (8).
    assert len(descriptors) == 3, files_under(out)
    assert {json.loads(p.read_text())["num_warps"] for p in descriptors} == {2, 4, 8}
    assert (out / "scale-b" / "cuda_80" / "launch.json").is_file()  # a plain name is its folder


# ---- item 6: user faults are not internal errors -----------------------------------------------

EXITS_IN_COMPILE = '''\
import triton
import triton.language as tl


@triton.constexpr_function
def pick_block(n):
    {exit}


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    B: tl.constexpr = pick_block(BLOCK)
    offs = tl.program_id(0) * B + tl.arange(0, B)
    mask = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=mask), mask=mask)
'''


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_exits_in_the_kernels_code_during_the_compile_are_its_red_cell(venv_python, tmp_path, isolation):
    (tmp_path / "os_exit.py").write_text(EXITS_IN_COMPILE.format(exit='__import__("os")._exit(0)'))
    (tmp_path / "sys_exit.py").write_text(EXITS_IN_COMPILE.format(exit="raise SystemExit(3)"))
    (tmp_path / "asks_gpu.py").write_text(EXITS_IN_COMPILE.format(
        exit="return triton.runtime.driver.active.utils.get_device_properties(0)"))
    body = ('[defaults]\ntargets = ["cuda:80"]\n' + axpy_row("os_exit", target="os_exit.py:axpy")
            + axpy_row("sys_exit", target="sys_exit.py:axpy")
            + axpy_row("asks_gpu", target="asks_gpu.py:axpy")
            + axpy_row("jit_fn", target="kernels.py:axpy").replace(
                "constants = { BLOCK = 1024 }", 'constants = { BLOCK = { jit_function = "os:system" } }')
            + axpy_row("healthy"))
    manifest = write_manifest(tmp_path, body)
    json_path = tmp_path / "out.json"
    run = check(["--manifest", manifest, "--json", json_path, "--isolation", isolation], venv_python, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    cells = cells_by_position(json.loads(json_path.read_text()))
    assert cells[("healthy", "cuda:80")]["status"] == "ok"
    expected = {
        "os_exit": ("crash", "frontend", "exited with status 0 in stage frontend"),
        "sys_exit": ("frontend-error", "frontend", "exit(3) was called while Triton compiled the kernel"),
        "jit_fn": ("import-error", "import", "os:system is not a @triton.jit function"),
        # A GPU question from the kernel's own code: its failure in a compile-only run, not ours.
        "asks_gpu": ("frontend-error", "frontend", "the kernel's code at asks_gpu.py:7 asked the GPU driver"),
    }
    for row, (kind, stage, words) in expected.items():
        cell = cells[(row, "cuda:80")]
        assert (cell["kind"], cell["stage"]) == (kind, stage), cell
        assert words in cell["message"], cell["message"]


def test_specialization_of_another_shape_is_exit_2(venv_python, tmp_path):
    body = ('[defaults]\ntargets = ["cuda:80"]\n\n[[kernel]]\nname = "k"\ntarget = "kernels.py:axpy"\n'
            "specialization = '[1,2,3]'\n")
    manifest = write_manifest(tmp_path, body)
    run = check(["--manifest", manifest], venv_python, tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    line = one_error_line(run)
    assert f"{manifest}:7: kernel 'k'.specialization: is a JSON array" in line, line
    assert "serialize_specialization_data" in line, line


@pytest.mark.parametrize("command, flag", [("check", "--save-ir"), ("export", "-o")])
def test_an_output_folder_that_is_not_a_folder_is_exit_2(venv_python, tmp_path, command, flag):
    manifest = write_manifest(tmp_path, axpy_manifest(["cuda:80"]))
    (tmp_path / "a_file").write_text("x")
    for target in ("/dev/null", tmp_path / "a_file", tmp_path / "a_file" / "below"):
        targets = ["-t", "cuda:80"] if command == "export" else []
        run = run_tool([command, "--manifest", manifest, "--python", venv_python, *targets, flag, target],
                       cwd=tmp_path, timeout=120)
        assert run.returncode == 2, run.stdout + run.stderr
        line = one_error_line(run)
        assert line.startswith(f"triton-portcheck: {flag} {target}: "), line
        assert "expected a folder" in line, line
    assert os.path.exists("/dev/null") and not os.path.isdir("/dev/null")
    assert (tmp_path / "a_file").read_text() == "x"
