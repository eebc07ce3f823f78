"""The bundled demo, compiled for all 9 default targets with the real Triton 3.9.0 (no GPU)."""
import json
import re
from pathlib import Path

import pytest

from conftest import assert_no_leftovers, cells_by_position, run_tool

pytestmark = pytest.mark.slow

TARGETS = ["cuda:75", "cuda:80", "cuda:90", "cuda:100", "cuda:120",
           "hip:gfx942", "hip:gfx950", "hip:gfx1100", "hip:gfx1250"]
CUDA = TARGETS[:5]
HIP = TARGETS[5:]
ROWS = ["axpy", "gamma_ratio", "gamma_ratio_guarded", "quantize_fp8", "scatter_rows", "dot_small[fp16]",
        "dot_small[int8]", "rowsum_blockptr", "poll_flags"]

# (row, targets, kind, stage, pass, message fragment, group letter)
FAILURES = [
    ("gamma_ratio", HIP, "frontend-error", "frontend", None,
     "AttributeError: module 'triton.language.extra.hip.libdevice' has no attribute 'tgamma'", "A"),
    ("quantize_fp8", ["cuda:75", "cuda:80"], "frontend-error", "frontend", None,
     "fp8e4nv not supported in this architecture", "B"),
    ("scatter_rows", ["cuda:90", "cuda:120"], "assembler-error", "cubin", None,
     "Feature '.tile::scatter4' not supported", "C"),
    ("dot_small[int8]", ["cuda:75"], "mlir-error", "ttgir", "TritonGPUAccelerateMatmul", None, "D"),
    ("rowsum_blockptr", TARGETS, "frontend-error", "frontend", None,
     "Block pointers have been removed in favor of the tensor descriptor API", "E"),
]
SHORT = {"frontend-error": "front", "mlir-error": "mlir", "assembler-error": "asm"}
EXPECTED = {(row, t): (kind, stage, pss, msg, letter)
            for row, targets, kind, stage, pss, msg, letter in FAILURES for t in targets}
DOCUMENTED_CELL_KEYS = {"kernel", "variant", "target", "triton", "status", "kind", "stage", "message",
                        "fingerprint", "new", "compile_s", "stages", "metadata", "sizes", "log"}
HEX12 = re.compile(r"^[0-9a-f]{12}$")


# The static pre-checks predict these (libdevice.tgamma on hip, fp8e4nv below sm_89): marked "!".
PREDICTED = {("gamma_ratio", t) for t in ("hip:gfx942", "hip:gfx950", "hip:gfx1100", "hip:gfx1250")} | \
    {("quantize_fp8", "cuda:75"), ("quantize_fp8", "cuda:80")}


def expected_label(row, target):
    if (row, target) not in EXPECTED:
        return "ok"
    kind, _, _, _, letter = EXPECTED[(row, target)]
    return f"{SHORT[kind]}:{letter}" + ("!" if (row, target) in PREDICTED else "")


# ---------------------------------------------------------------- exit code and the JSON document


def test_exit_code_is_1_because_of_new_failures(demo_result):
    code, stdout, _ = demo_result
    assert code == 1, stdout


def test_nothing_on_stderr_when_not_a_terminal(demo_run):
    # The live progress line is only drawn on a terminal; the run itself must not complain.
    assert demo_run.stderr == ""


def test_report_top_level(demo_result):
    _, _, report = demo_result
    assert isinstance(report["schema_version"], int) and report["schema_version"] >= 1
    assert report["tool"]["name"] == "triton-portcheck"
    assert re.match(r"^\d+\.\d+\.\d+", report["tool"]["version"])
    assert report["environment"]["triton"]["version"] == "3.9.0"
    assert report["environment"]["triton"]["label"] == "current"
    assert report["environment"]["gpu"] is None
    assert report["environment"]["options"]["manifest"] == "--demo"
    assert report["interrupted"] is False
    assert report["targets"] == TARGETS
    assert report["rows"] == ROWS
    expected = {"cells": 81, "ok": 63, "failed": 18, "new": 18, "xfail": 0, "xpass": 0}
    assert {k: report["summary"].get(k) for k in expected} == expected


def test_report_has_every_cell_exactly_once(demo_result):
    _, _, report = demo_result
    cells = report["cells"]
    assert len(cells) == 81
    positions = [(c["row"], c["target"]) for c in cells]
    assert len(set(positions)) == 81
    assert set(positions) == {(r, t) for r in ROWS for t in TARGETS}


def test_every_cell_has_the_documented_keys(demo_result):
    _, _, report = demo_result
    for cell in report["cells"]:
        missing = DOCUMENTED_CELL_KEYS - set(cell)
        assert not missing, f"{cell['row']} on {cell['target']} lacks {missing}"
        assert cell["triton"] == "current"
        assert cell["triton_version"] == "3.9.0"


def test_variant_rows_split_kernel_and_variant(demo_result):
    _, _, report = demo_result
    cells = cells_by_position(report)
    assert cells[("dot_small[int8]", "cuda:80")]["kernel"] == "dot_small"
    assert cells[("dot_small[int8]", "cuda:80")]["variant"] == "int8"
    assert cells[("dot_small[fp16]", "cuda:80")]["variant"] == "fp16"
    assert cells[("axpy", "cuda:80")]["kernel"] == "axpy"
    assert cells[("axpy", "cuda:80")]["variant"] is None


# ---------------------------------------------------------------- the matrix itself


@pytest.mark.parametrize("row", ROWS)
def test_row_statuses_kinds_and_stages(demo_result, row):
    _, _, report = demo_result
    cells = cells_by_position(report)
    for target in TARGETS:
        cell = cells[(row, target)]
        where = f"{row} on {target}: {cell['message']}"
        if (row, target) not in EXPECTED:
            assert cell["status"] == "ok", where
            assert cell["kind"] is None and cell["stage"] is None and cell["fingerprint"] is None, where
            assert cell["new"] is False
            continue
        kind, stage, pss, fragment, _ = EXPECTED[(row, target)]
        assert cell["status"] == "failed", where
        assert cell["new"] is True, where
        assert cell["kind"] == kind, where
        assert cell["stage"] == stage, where
        if pss is not None:
            assert cell["pass"] == pss, where
        if fragment is not None:
            assert fragment in cell["message"], where


def test_gamma_ratio_message_is_exact(demo_result):
    _, _, report = demo_result
    cells = cells_by_position(report)
    for target in HIP:
        assert cells[("gamma_ratio", target)]["message"] == (
            "AttributeError: module 'triton.language.extra.hip.libdevice' has no attribute 'tgamma'")


def test_scatter_message_names_ptxas_and_the_arch(demo_result):
    _, _, report = demo_result
    cells = cells_by_position(report)
    for target, sm in (("cuda:90", "sm_90a"), ("cuda:120", "sm_120a")):
        msg = cells[("scatter_rows", target)]["message"]
        assert re.match(r"^ptxas\S*: Feature '\.tile::scatter4' not supported", msg), msg
        assert sm in msg, msg


def test_counts(demo_result):
    _, _, report = demo_result
    statuses = [c["status"] for c in report["cells"]]
    assert statuses.count("ok") == 63
    assert statuses.count("failed") == 18
    assert len(statuses) == 81


# ---------------------------------------------------------------- per-cell detail


def test_every_cell_has_stage_timings(demo_result):
    """Every cell, failed ones included, records the seconds of the stages it ran."""
    _, _, report = demo_result
    empty = [f"{c['row']} on {c['target']} ({c['kind']})" for c in report["cells"] if not c["stages"]]
    assert not empty, f"{len(empty)} cells have no stage timings: {empty}"
    for cell in report["cells"]:
        for stage, seconds in cell["stages"].items():
            assert isinstance(seconds, (int, float)) and seconds >= 0, (cell["row"], cell["target"], stage)
        assert cell["compile_s"] > 0, (cell["row"], cell["target"])


def test_ok_cells_ran_every_backend_stage(demo_result):
    _, _, report = demo_result
    for cell in report["cells"]:
        if cell["status"] != "ok":
            continue
        final = {"cubin", "ptx"} if cell["target"].startswith("cuda:") else {"hsaco", "amdgcn"}
        assert {"frontend", "ttir", "ttgir", "llir"} | final <= set(cell["stages"]), cell["stages"]
        assert all(v > 0 for v in cell["stages"].values()), (cell["row"], cell["target"], cell["stages"])
        assert cell["compile_s"] >= max(cell["stages"].values())


def test_failed_cells_time_the_stage_that_failed(demo_result):
    """Failures past the frontend must at least record the failing stage and the frontend."""
    _, _, report = demo_result
    for cell in report["cells"]:
        if cell["status"] == "failed" and cell["stage"] != "frontend":
            assert cell["stage"] in cell["stages"], (cell["row"], cell["target"], cell["stages"])
            assert "frontend" in cell["stages"], (cell["row"], cell["target"], cell["stages"])


def test_failed_cells_have_fingerprint_message_and_log(demo_result):
    _, _, report = demo_result
    for cell in report["cells"]:
        if cell["status"] != "failed":
            assert cell["log"] is None and cell["message"] is None
            continue
        assert HEX12.match(cell["fingerprint"] or ""), cell["fingerprint"]
        assert cell["message"] and cell["message"].strip()
        assert cell["log"] and cell["log"].strip()
        assert "Traceback" in cell["log"], cell["log"][:400]


def test_ok_cells_have_metadata_and_binaries(demo_result):
    _, _, report = demo_result
    for cell in report["cells"]:
        if cell["status"] != "ok":
            continue
        where = f"{cell['row']} on {cell['target']}"
        md = cell["metadata"]
        assert md["num_warps"] == 4, where
        assert isinstance(md["shared"], int) and md["shared"] >= 0, where
        backend, arch = cell["target"].split(":")
        assert md["target"]["backend"] == backend, where
        assert str(md["target"]["arch"]) == arch, where
        assert md["warp_size"] == (64 if arch in ("gfx942", "gfx950") else 32), where
        binary = "cubin" if backend == "cuda" else "hsaco"
        assert cell["sizes"].get(binary, 0) > 0, f"{where}: {cell['sizes']}"


def test_shared_memory_is_used_by_the_dot_kernel(demo_result):
    # A cross-check that 'shared' is a real number, not always 0.
    _, _, report = demo_result
    cells = cells_by_position(report)
    assert cells[("dot_small[fp16]", "cuda:80")]["metadata"]["shared"] > 0
    assert cells[("axpy", "cuda:80")]["metadata"]["shared"] == 0


# ---------------------------------------------------------------- fingerprints and groups


def test_one_fingerprint_per_failure_group(demo_result):
    _, _, report = demo_result
    cells = cells_by_position(report)
    fingerprint_of_group = {}
    for (row, target), (_, _, _, _, letter) in EXPECTED.items():
        cell = cells[(row, target)]
        assert cell["group"] == letter, (row, target, cell["group"])
        fingerprint_of_group.setdefault(letter, set()).add(cell["fingerprint"])
    for letter, fps in fingerprint_of_group.items():
        assert len(fps) == 1, f"group {letter} has several fingerprints: {fps}"
    all_fps = [next(iter(v)) for v in fingerprint_of_group.values()]
    assert len(set(all_fps)) == 5, fingerprint_of_group
    # sm_90a and sm_120a differ in the message, not in the fingerprint
    assert cells[("scatter_rows", "cuda:90")]["fingerprint"] == cells[("scatter_rows", "cuda:120")]["fingerprint"]
    assert cells[("scatter_rows", "cuda:90")]["message"] != cells[("scatter_rows", "cuda:120")]["message"]


def test_fingerprints_are_stable_from_another_directory(demo_run, binary, venv_python, copy_demo, tmp_path):
    """The failing subset, run from a copy of demo/ elsewhere, yields the same fingerprints."""
    fail_targets = {}
    for (row, target) in EXPECTED:
        fail_targets.setdefault(row, []).append(target)
    # rowsum fails everywhere: two columns are enough to compare
    fail_targets["rowsum_blockptr"] = ["cuda:80", "hip:gfx942"]
    manifest = copy_demo / "subset.toml"
    manifest.write_text(_subset_manifest(copy_demo, fail_targets))

    json_path = tmp_path / "subset.json"
    # --no-cache: the copy must really be compiled, not served from the demo run's results.
    run = run_tool(["check", "--manifest", manifest, "--python", venv_python, "--json", json_path, "-j", "2",
                    "--no-cache"],
                   cwd=tmp_path, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(json_path.read_text())
    expected_cells = sum(len(v) for v in fail_targets.values())
    assert len(report["cells"]) == expected_cells

    original = cells_by_position(demo_run.report)
    for cell in report["cells"]:
        where = (cell["row"], cell["target"])
        assert cell["status"] == "failed", where
        assert cell["fingerprint"] == original[where]["fingerprint"], where
        assert cell["kind"] == original[where]["kind"], where
        # ... while the run really used the copy: the source locations point into it.
        if cell["error_source"]:
            source = Path(cell["error_source"]["file"])
            source = source if source.is_absolute() else tmp_path / source  # relative to the run's cwd
            assert source.resolve().is_relative_to(copy_demo.resolve()), cell["error_source"]
    assert any(c["error_source"] for c in report["cells"])
    assert_no_leftovers(run.tag)


def _subset_manifest(demo_dir, targets_by_row):
    import tomllib
    demo = tomllib.loads((demo_dir / "portcheck.toml").read_text())

    def value(v):
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        raise TypeError(v)

    out = ["[defaults]", f"timeout = {demo['defaults']['timeout']}", ""]
    for kernel in demo["kernel"]:
        variants = kernel.get("variant")
        rows = ([(f"{kernel['name']}[{v['name']}]", v) for v in variants] if variants else [(kernel["name"], None)])
        rows = [(name, v) for name, v in rows if name in targets_by_row]
        if not rows:
            continue
        out.append("[[kernel]]")
        for k, v in kernel.items():
            if k != "variant":
                out.append(f"{k} = {value(v)}")
        if variants is None:
            out.append(f"targets = {value(targets_by_row[kernel['name']])}")
        for name, v in rows:
            if v is None:
                continue
            out.append("[[kernel.variant]]")
            for k, x in v.items():
                out.append(f"{k} = {value(x)}")
            out.append(f"targets = {value(targets_by_row[name])}")
        out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- terminal output


def test_terminal_header(demo_result):
    _, stdout, _ = demo_result
    first = stdout.splitlines()[0]
    assert re.match(r"^triton-portcheck \S+ · triton 3\.9\.0 \(python 3\.\d+\.\d+\) · no GPU involved$", first), first


def test_terminal_matrix(demo_result):
    _, stdout, _ = demo_result
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("kernel "))
    assert lines[header].split() == ["kernel", *TARGETS]
    for offset, row in enumerate(ROWS, start=1):
        words = lines[header + offset].split()
        assert words[0] == row
        assert words[1:] == [expected_label(row, t) for t in TARGETS], lines[header + offset]


def test_terminal_footnotes(demo_result):
    _, stdout, _ = demo_result
    notes = {m.group(1): m.group(2) for m in re.finditer(r"^\[([A-Z])\] (.*)$", stdout, re.M)}
    assert sorted(notes) == ["A", "B", "C", "D", "E"], notes
    assert notes["A"].startswith("frontend-error in stage frontend: AttributeError: module "
                                 "'triton.language.extra.hip.libdevice' has no attribute 'tgamma'")
    assert notes["B"].startswith("frontend-error in stage frontend:") and "fp8e4nv" in notes["B"]
    assert notes["C"].startswith("assembler-error in stage cubin: ptxas")
    assert "'.tile::scatter4' not supported" in notes["C"]
    assert notes["D"].startswith("mlir-error in pass TritonGPUAccelerateMatmul (stage ttgir):")
    assert notes["E"] == ("frontend-error in stage frontend: Block pointers have been removed in favor of the "
                          "tensor descriptor API")
    assert "    gamma_ratio on hip:gfx942, hip:gfx950, hip:gfx1100, hip:gfx1250\n" in stdout
    assert "    quantize_fp8 on cuda:75, cuda:80\n" in stdout
    assert "    scatter_rows on cuda:90, cuda:120\n" in stdout
    assert "    dot_small[int8] on cuda:75\n" in stdout
    assert "    rowsum_blockptr on " + ", ".join(TARGETS) + "\n" in stdout


def test_terminal_summary(demo_result):
    _, stdout, _ = demo_result
    assert re.search(r"^81 cells: 63 ok, 18 failed \(18 new\)", stdout, re.M), stdout[-600:]
    assert "INTERRUPTED" not in stdout
    assert "\033[" not in stdout  # no colour codes when stdout is a pipe
