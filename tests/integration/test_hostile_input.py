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


def short_id(value):
    """Test ids stay short: pytest puts the id in PYTEST_CURRENT_TEST, and an environment string
    over 128 KiB (a 20,000-level nesting) makes every exec of the tool fail with E2BIG."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} chars)"


# Each command that reads a report: report, merge, diff, and --baseline.
def commands_reading(path, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(report())
    return [["report", path], ["merge", path, "-o", tmp_path / "merged.json"], ["diff", good, path],
            ["report", good, "--baseline", path]]


@pytest.mark.parametrize("case,text,fragments", ids=short_id, argvalues=[
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


@pytest.mark.parametrize("environment", ids=short_id, argvalues=[
    {"python": None, "triton": {"version": "3.9.0"}},
    {"triton": {"version": None}},
    {"triton": None, "tritons": [{"version": None}], "host": None, "started": None, "options": None},
])
def test_null_where_the_environment_has_text_is_taken_as_absent(tmp_path, environment):
    # Issue 28: `environment.python` or `environment.triton.version` null was exit 4 in every
    # command that reads a report ("cannot use value() with null").
    path = tmp_path / "null.json"
    path.write_text(report(environment=environment))
    outputs = [a for flag in ("--html", "--junit", "--sarif", "--markdown", "--gitlab", "--json")
               for a in (flag, tmp_path / f"out{flag}")]
    for args in commands_reading(path, tmp_path):
        run = run_tool([*args, *(outputs if args[0] == "report" else [])], cwd=tmp_path)
        assert run.returncode in (0, 1), (args, run.stderr)
        assert "internal error" not in run.stderr


def test_cache_stats_skips_lines_of_runs_jsonl_it_cannot_read(tmp_path):
    home = tmp_path / "home"
    (home / "cache").mkdir(parents=True)
    good = {"time": "2026-12-02T06:47:28Z", "local_hits": 3, "misses": 1, "remote": None, "readonly": False}
    bad = [dict(good, misses=None), dict(good, misses="7"), dict(good, misses=[1]), dict(good, misses=1e300),
           dict(good, time=None), dict(good, remote=5), dict(good, readonly="no"), None, [], 5, "x"]
    lines = [json.dumps(good)] + [json.dumps(b) for b in bad] + ["{"]
    (home / "cache" / "runs.jsonl").write_text("\n".join(lines) + "\n")
    run = run_tool(["cache", "stats"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert run.returncode == 0, run.stderr
    assert "last 1 checks:" in run.stdout and "2026-12-02T06:47:28Z" in run.stdout


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


@pytest.mark.parametrize("row,fragments", ids=short_id, argvalues=[
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
