"""`triton-portcheck targets`: what the installed Triton can compile for."""
import re

from conftest import run_tool

DEFAULT_TARGETS = ["cuda:75", "cuda:80", "cuda:90", "cuda:100", "cuda:120",
                   "hip:gfx942", "hip:gfx950", "hip:gfx1100", "hip:gfx1250"]
WAVE64 = {"hip:gfx942", "hip:gfx950"}


def target_table(stdout):
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["target", "warp", "size"])
    table = {}
    for line in lines[header + 1:]:
        if not line.strip():
            break  # the next table (fp8 dtypes and launch limits) follows a blank line
        name, warp, assembler = re.match(r"^(\S+)\s+(\S+)\s+(.*)$", line).groups()
        table[name] = (warp, assembler)
    return lines, table


def test_targets_lists_the_nine_defaults(venv_python, tmp_path):
    run = run_tool(["targets", "--python", venv_python], cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    lines, table = target_table(run.stdout)
    assert lines[0].startswith("triton 3.9.0 at ")
    assert re.match(r"^python 3\.\d+\.\d+ \(.*python.*\)$", lines[1]), lines[1]
    backends = next(line for line in lines if line.startswith("backends: "))
    assert set(backends[len("backends: "):].split(", ")) == {"cuda", "hip"}
    assert list(table) == DEFAULT_TARGETS
    for name, (warp, assembler) in table.items():
        assert warp == ("64" if name in WAVE64 else "32"), (name, warp)
        if name.startswith("cuda:"):
            assert re.fullmatch(r"ptxas\S* \(CUDA \d+\.\d+, V\d+\.\d+\.\d+\)", assembler), (name, assembler)
        else:
            assert "AMDGPU" in assembler, (name, assembler)
        assert "cannot compile" not in assembler


def test_targets_subset_keeps_the_order_given(venv_python, tmp_path):
    run = run_tool(["targets", "--python", venv_python, "-t", "hip:gfx950,cuda:90", "-t", "hip:gfx1100"],
                   cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    _, table = target_table(run.stdout)
    assert list(table) == ["hip:gfx950", "cuda:90", "hip:gfx1100"]
    assert table["hip:gfx950"][0] == "64" and table["hip:gfx1100"][0] == "32" and table["cuda:90"][0] == "32"


def test_targets_rejects_a_bad_target(venv_python, tmp_path):
    run = run_tool(["targets", "--python", venv_python, "-t", "cuda:abc"], cwd=tmp_path, timeout=120)
    assert run.returncode == 2
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and "cuda:abc" in run.stderr
