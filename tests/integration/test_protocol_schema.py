"""The protocol between the tool and its worker, defined once in
python/portcheck_worker/protocol.schema.json (issue 44): the worker's checker gives the same
answers as the tool's (the shared cases), the messages the worker's real handlers write are what
the schema defines, and a field renamed on either side fails: the tool's check of what the worker
wrote, the worker's check of what the tool sent. The tool's own requests are checked against the
schema by its unit tests (tests/unit/protocol_test.cpp, check_pipeline_test.cpp).
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import DEMO_DIR, REPO, WORKER_DIR, run_tool, tool_env
from test_protocol import share_copy

sys.path.insert(0, str(WORKER_DIR))
from portcheck_worker.base import protocol, schema  # noqa: E402  (the worker's own modules)

CASES = REPO / "tests" / "unit" / "data" / "protocol-cases.json"
VERSION = protocol.PROTOCOL_VERSION
TARGET = {"backend": "cuda", "arch": "90", "warp_size": 32}


def test_the_shared_cases_get_the_same_answers_as_the_tools_checker():
    cases = json.loads(CASES.read_text())["cases"]
    assert len(cases) >= 30
    for case in cases:
        assert protocol.SCHEMA.problem(case["definition"], case["message"]) == case["problem"], case["why"]


def test_the_checker_refuses_a_keyword_it_does_not_check():
    with pytest.raises(schema.SchemaError, match='keyword "maximum" is not checked'):
        schema.Schema({"$defs": {"message": {"type": "integer", "maximum": 10}}})
    with pytest.raises(schema.SchemaError, match="does not name a definition"):
        schema.Schema({"$defs": {"message": {"$ref": "#/$defs/elsewhere"}}})


def test_every_message_is_defined_and_the_version_is_the_schemas():
    document = json.loads((WORKER_DIR / "portcheck_worker" / "protocol.schema.json").read_text())
    assert VERSION == document["x-protocol-version"]
    for name in document["x-messages"]:
        assert protocol.SCHEMA.defines(name), name


# Runs in the test environment's Python, with Triton: each handler as the tool's requests reach it.
WRITE_MESSAGES = r'''
import json, sys
from portcheck_worker.base import messages, protocol
from portcheck_worker.cell import handlers
from portcheck_worker.forking.warm_up import warm_up
from portcheck_worker.server import probe as probe_handler

demo, target = sys.argv[1], json.loads(sys.argv[2])
progress = protocol.ProgressLog(None)
kernel = lambda name: {"file": f"{demo}/kernels.py", "function": name, "import_root": demo}
axpy = {"kind": "compile", "kernel": kernel("axpy"), "row_name": "axpy",
        "signature": {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16", "a": "fp32"},
        "constants": {"BLOCK": 1024}, "options": {"num_warps": 4}, "target": target, "zygote": None,
        "launch_limits": {"max_threads_per_block": 1024, "max_registers_per_thread": 255,
                          "register_allocation_unit": 256}}
blockptr = {**axpy, "kernel": kernel("rowsum_blockptr"), "row_name": "rowsum_blockptr",
            "signature": {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "M": "i32", "N": "i32", "stride_m": "i32"},
            "constants": {"BLOCK_M": 16, "BLOCK_N": 64}}
missing = {**axpy, "kernel": kernel("no_such_kernel"), "row_name": "missing"}
inspect = {"kind": "inspect", "zygote": None, "kernels": [{"id": "axpy", "kernel": kernel("axpy")}],
           "cells": [{"id": 0, "request": axpy}], "targets": [target], "keys": True, "predict": True,
           "tool_version": "test"}
probe = {"protocol": protocol.PROTOCOL_VERSION, "targets": [target], "predict": True}
written = [
    ("probe_answer", probe_handler.handle_probe(messages.probe_request(probe))),
    ("inspect_answer", handlers.handle_cell(inspect, progress)),
    ("compile_result", handlers.handle_cell(axpy, progress)),
    ("compile_result", handlers.handle_cell(blockptr, progress)),
    ("compile_result", handlers.handle_cell(missing, progress)),
    ("server_event", {"event": "warm", **warm_up([messages.Target(**target)])}),
    # What an export writes, and an AMD kernel's resources (its descriptor's counts).
    ("compile_result", handlers.handle_cell({**axpy, "export_dir": sys.argv[3]}, progress)),
    ("compile_result", handlers.handle_cell({**axpy, "target": {"backend": "hip", "arch": "gfx942", "warp_size": 64}},
                                            progress)),
]
print(json.dumps([[kind, message.get("status"), protocol.SCHEMA.problem(kind, message)] for kind, message in written]))
print(json.dumps(written[2][1].get("launch")))
'''


def test_the_messages_the_worker_writes_are_what_the_schema_defines(venv_python, tmp_path):
    # The handlers themselves, as the fork server and `python -m portcheck_worker` call them: a
    # compile that passes, one that fails in the frontend, a kernel that is not there.
    run = subprocess.run([str(venv_python), "-c", WRITE_MESSAGES, str(DEMO_DIR), json.dumps(TARGET),
                          str(tmp_path / "export")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=tool_env(PYTHONPATH=WORKER_DIR, TRITON_CACHE_DIR=str(tmp_path / "cache")))
    assert run.returncode == 0, run.stderr
    written = json.loads(run.stdout.splitlines()[-2])
    assert [status for _, status, _ in written] == [None, "ok", "ok", "error", "error", None, "ok", "ok"]
    assert [problem for _, _, problem in written] == [None] * len(written), written
    # The compile whose request carried launch limits was judged against them (launch_rules.py).
    launch = json.loads(run.stdout.splitlines()[-1])
    assert launch["problems"] == [] and launch["needs"]["threads_per_block"] == 128, launch


def cell_files(tmp_path, request):
    folder = tmp_path / "cell"
    folder.mkdir()
    (folder / "request.json").write_text(json.dumps(request))
    return [str(folder / name) for name in ("request.json", "result.json", "progress")]


def test_a_field_the_tool_renames_is_refused_by_the_worker_in_one_line(venv_python, tmp_path):
    request = {"kind": "compile", "kernel": {"file": str(DEMO_DIR / "kernels.py"), "function": "axpy",
                                             "import_root": str(DEMO_DIR)},
               "row": "axpy", "signature": {}, "constants": {}, "options": {}, "target": TARGET, "zygote": None}
    files = cell_files(tmp_path, request)
    run = subprocess.run([str(venv_python), "-m", "portcheck_worker", "cell", *files], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path, env=tool_env(PYTHONPATH=WORKER_DIR))
    assert run.returncode == protocol.EXIT_BUG, (run.stdout, run.stderr)
    assert run.stderr.splitlines() == [
        f"portcheck-worker: protocol error: compile_request breaks protocol {VERSION}: "
        'compile_request: missing member "row_name" (a bug of triton-portcheck: please report it)']
    assert not os.path.exists(files[1])


def test_a_server_command_that_breaks_the_schema_is_answered_with_an_error_event(venv_python, tmp_path):
    commands_read, commands_write = os.pipe()
    events_read, events_write = os.pipe()
    # The fork server's channel is descriptors 3 (commands in) and 4 (events out).
    server = subprocess.Popen(
        [str(venv_python), "-c", "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
         "from portcheck_worker.__main__ import main; sys.exit(main(['serve']))", str(commands_read), str(events_write)],
        pass_fds=(commands_read, events_write), cwd=tmp_path, env=tool_env(PYTHONPATH=WORKER_DIR),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    os.close(commands_read)
    os.close(events_write)
    try:
        with os.fdopen(commands_write, "w") as commands, os.fdopen(events_read) as events:
            commands.write(json.dumps({"op": "warm", "target": [TARGET]}) + "\n")
            commands.flush()
            event = json.loads(events.readline())
            commands.write(json.dumps({"op": "quit"}) + "\n")
        assert event == {"event": "error", "message":
                         f"protocol error: server_command breaks protocol {VERSION}: server_command: "
                         'missing member "targets" (a bug of triton-portcheck: please report it)'}
        assert server.wait(timeout=60) == 0, server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def rename_compile_s(worker):
    """A worker whose compiled cells call their compile time "compile_seconds"."""
    stages = worker / "compile" / "stages.py"
    text = stages.read_text()
    assert '        "compile_s": compile_s,\n' in text
    stages.write_text(text.replace('        "compile_s": compile_s,\n', '        "compile_seconds": compile_s,\n'))


@pytest.mark.parametrize("isolation", ["fork", "process"])
def test_a_field_the_worker_renames_is_each_cells_internal_error_naming_it(venv_python, tmp_path, isolation):
    share = share_copy(tmp_path, rename_compile_s)
    json_path = tmp_path / "out.json"
    run = run_tool(["check", "--demo", "-t", "cuda:90", "--python", venv_python, "--isolation", isolation,
                    "--no-cache", "--json", json_path], cwd=tmp_path, timeout=300, TRITON_PORTCHECK_SHARE=share)
    assert run.returncode == 1, (run.stdout, run.stderr)
    cells = json.loads(json_path.read_text())["cells"]
    compiled = [c for c in cells if c["kind"] == "internal-error"]
    assert compiled, cells
    for cell in compiled:
        assert cell["message"] == (f"the worker's result breaks protocol {VERSION}: compile_result: missing member "
                                   '"compile_s" (a bug of triton-portcheck: please report it)'), cell
    # The cells the compiler failed are failures, whose results the rename does not touch: their
    # verdicts stand (rowsum_blockptr in the frontend, scatter_rows in ptxas).
    assert {c["kernel"]: c["kind"] for c in cells if c["kind"] != "internal-error"} == {
        "rowsum_blockptr": "frontend-error", "scatter_rows": "assembler-error"}, cells


# ---- The channels outside the messages (the schema's x-channels): the worker's side. The tool's
# side is tests/unit/worker_channels_test.cpp.

CHANNELS = json.loads((WORKER_DIR / "portcheck_worker" / "protocol.schema.json").read_text())["x-channels"]


def test_the_workers_names_for_the_channels_are_the_schemas():
    from portcheck_worker.base import channels
    from portcheck_worker.capture import vendor_devices
    named = {value for name, value in vars(channels).items() if name.startswith("ENV_")}
    assert named == set(CHANNELS["environment"])
    # The standalone module repeats the two it reads.
    assert vendor_devices.ENV_PERSONA == channels.ENV_CAPTURE_PERSONA
    assert vendor_devices.ENV_FAKE_GPU == channels.ENV_CAPTURE_FAKE_GPU
    codes = {name: entry["code"] for name, entry in CHANNELS["exit_codes"].items()}
    assert (codes["usage"], codes["environment"], codes["bug"]) == (channels.EXIT_USAGE, channels.EXIT_ENVIRONMENT,
                                                                    channels.EXIT_BUG)
    assert protocol.EXIT_ENVIRONMENT == codes["environment"] and protocol.EXIT_BUG == codes["bug"]
    grammar = CHANNELS["lines"]["progress"]["grammar"]
    assert grammar["stage"].startswith(channels.STAGE_PREFIX)
    assert (grammar["child_forked"], grammar["child_ended"]) == (channels.MARK_CHILD_FORKED, channels.MARK_CHILD_ENDED)
    batch = CHANNELS["lines"]["batch_log"]["grammar"]
    assert (batch["begun"].split()[0], batch["done"].split()[0]) == (channels.BATCH_BEGUN, channels.BATCH_DONE)
    assert CHANNELS["files"]["batch_stop"]["suffix"] == channels.BATCH_STOP_SUFFIX


def test_no_worker_module_spells_a_channels_name_of_its_own():
    """A name read or written under another spelling would be a channel nobody defined."""
    worker = WORKER_DIR / "portcheck_worker"
    allowed = {worker / "base" / "channels.py", worker / "capture" / "vendor_devices.py"}
    import re
    for path in worker.rglob("*.py"):
        if path in allowed:
            continue
        code = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
        assert not re.search(r"[\"'](TRITON_)?PORTCHECK_[A-Z_]+[\"']", code), path


def test_the_lines_the_worker_writes_are_the_ones_the_schema_defines(tmp_path):
    from portcheck_worker.cell import batch
    from portcheck_worker.cell import child
    progress = tmp_path / "progress"
    log = protocol.ProgressLog(str(progress))
    for example in CHANNELS["lines"]["progress"]["examples"]:
        if "stage" in example["means"]:
            log.mark(example["means"]["stage"])
    log.close()
    stages = [e["line"] for e in CHANNELS["lines"]["progress"]["examples"] if "stage" in e["means"]]
    assert progress.read_text().splitlines() == stages
    # The marks of --isolation process's parent, as cell/child.py writes them.
    marks = tmp_path / "marks"
    child._note(str(marks), protocol.MARK_CHILD_FORKED)
    child._note(str(marks), protocol.MARK_CHILD_ENDED)
    assert marks.read_text().splitlines() == [e["line"] for e in CHANNELS["lines"]["progress"]["examples"]
                                              if "mark" in e["means"]]
    # A batch's log: each example's kind, id and figure, written as the leader writes them, has the
    # example's shape (the seconds are the clock's now).
    path = tmp_path / "batch.log"
    writer = batch.Log(str(path))
    examples = CHANNELS["lines"]["batch_log"]["examples"]
    for example in examples:
        means = example["means"]
        writer.mark(means["kind"], means["id"], means["figure"])
    writer.close()
    for line, example in zip(path.read_text().splitlines(), examples, strict=True):
        words, expected = line.split(" "), example["line"].split(" ")
        assert len(words) == 4 and (words[0], words[1], words[3]) == (expected[0], expected[1], expected[3]), line
        assert len(words[2].split(".")[1]) == len(expected[2].split(".")[1]), line
