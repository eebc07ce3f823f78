"""Issue 14 item 4, through the real binary: input built to break the parsers is one exit-2 line
naming the file and the key path (exit 3 for a full disk), never a signal or an internal error.
No Triton compile: the manifests fail before the probe, the reports are written by hand."""
import json

import pytest

from conftest import run_tool, write_manifest

DEEP = 100_000


def report(**changes):
    cell = {"kernel": "axpy", "target": "cuda:80", "triton": "current", "status": "failed",
            "kind": "mlir-error", "stage": "ttgir", "message": "bad", "fingerprint": "aaaaaaaaaaaa",
            "launch": {"problems": ["needs 300 KiB of shared memory"]}, "metadata": {}}
    data = {"schema_version": 1, "tool": {"version": "0.2.0"}, "targets": ["cuda:80"],
            "rows": ["axpy"], "environment": {"triton": {"version": "3.9.0"}}, "cells": [cell]}
    for key, value in changes.items():
        (cell if key in cell else data)[key] = value
    return json.dumps(data)


def one_line_error(run, code, *fragments):
    assert run.returncode == code, (run.returncode, run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 500, run.stderr[:2000]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# Each command that reads a report: report, merge, diff, and --baseline.
def commands_reading(path, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(report())
    return [["report", path], ["merge", path, "-o", tmp_path / "merged.json"], ["diff", good, path],
            ["report", good, "--baseline", path]]


@pytest.mark.parametrize("case,text,fragments", [
    ("deep-environment", report(environment="@").replace('"@"', "[" * DEEP + "]" * DEEP),
     ["nested deeper than 512 levels", "(at environment"]),
    ("deep-metadata", report(metadata="@").replace('"@"', "{\"a\":" * DEEP + "1" + "}" * DEEP),
     ["nested deeper than 512 levels", "(at cells[0].metadata.a.a"]),
    ("huge-number", report(wall_s="@").replace('"@"', "1e400"), ["1e400", "(at wall_s)"]),
    ("problems-not-a-list", report(launch={"problems": False}),
     ["cells[0].launch.problems: expected an array of strings, found boolean"]),
])
def test_hostile_reports_are_exit_2_naming_file_and_key(tmp_path, case, text, fragments):
    path = tmp_path / f"{case}.json"
    path.write_text(text)
    for args in commands_reading(path, tmp_path):
        one_line_error(run_tool(args, cwd=tmp_path), 2, str(path), *fragments)
    assert not (tmp_path / "merged.json").exists()


def test_baseline_entry_of_the_wrong_type_is_exit_2(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(report())
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"baseline_version": 1, "failures": [
        {"row": "axpy", "target": "cuda:80", "fingerprint": "x", "message": False}]}))
    one_line_error(run_tool(["report", good, "--baseline", baseline], cwd=tmp_path), 2,
                   f"--baseline {baseline}: failures[0].message: expected a string, found boolean")


def test_full_disk_for_a_report_is_exit_3_with_the_fix(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(report())
    one_line_error(run_tool(["report", good, "--json", "/dev/full"], cwd=tmp_path), 3,
                   "No space left on device", "is full: free space there")


@pytest.mark.parametrize("row,fragments", [
    (f'name = "{"k" * 60_000}"\ntarget = "kernels.py:axpy"', ["kernel.name", "longer than 200"]),
    (f'name = "a"\ntarget = "kernels.py:{"f" * 60_000}-"', ["not a Python function name"]),
    (f'name = "a"\ntarget = "kernels.py:axpy"\nspecialization = \'{"[" * DEEP + "]" * DEEP}\'',
     ["portcheck.toml:4: kernel 'a'.specialization", "nested deeper than 512"]),
    (f'name = "a"\ntarget = "kernels.py:axpy"\noptions{".a" * DEEP} = 1',
     ["nested deeper than 64 levels"]),
])
def test_hostile_manifests_are_exit_2(venv_python, tmp_path, row, fragments):
    manifest = write_manifest(tmp_path, f"[[kernel]]\n{row}\n")
    run = run_tool(["check", "-m", manifest, "--python", venv_python], cwd=tmp_path)
    one_line_error(run, 2, *fragments)
