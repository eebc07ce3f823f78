"""The worker's typed messages (python/portcheck_worker/base/messages.py, channel_messages.py,
capture_messages.py):
every message the worker reads is a frozen class whose members are exactly its definition's
properties in protocol.schema.json, walked recursively through $ref and oneOf, so a member added
to (or dropped from) the schema fails here until the class says the same; a sample of each reads
into its class with every member of the Python type its annotation names, and what the worker
passes on (as_json) is the message again. Needs no Triton.
"""
import json
import sys
import typing

import pytest

from conftest import REPO, WORKER_DIR

sys.path.insert(0, str(WORKER_DIR))
from portcheck_worker.base import capture_messages, channel_messages, frozen_json, messages, protocol  # noqa: E402

DEFS = protocol.SCHEMA.document["$defs"]
CASES = REPO / "tests" / "unit" / "data" / "protocol-cases.json"
# Each message the worker reads (x-messages: to the worker, the fork server, a zygote or the
# capture hook), its class (or its alternatives' classes) and the one entry that reads it.
CLASSES = {**messages.MESSAGES, **channel_messages.MESSAGES, **capture_messages.MESSAGES}
READERS = {**{kind: (lambda kind: lambda raw: messages.read(kind, raw))(kind) for kind in messages.MESSAGES},
           "probe_request": messages.probe_request, **channel_messages.READERS,
           "server_command": channel_messages.server_command, "capture_persona": capture_messages.capture_persona}
# The user's own values, open in the schema: dicts, never read by name.
PASS_THROUGHS = {"constants", "options", "specialization"}
# Where the schema and the worker disagree, reported rather than papered over: when the schema
# is mended the entry must go (the test fails on a gap that is no longer there).
# Differences between a class and its definition that are known and meant; none today.
KNOWN_GAPS = set()
_SCALARS = {"string": str, "integer": int, "number": float, "boolean": bool}
_NONE = type(None)


def test_the_worker_reads_each_message_the_schema_sends_it_through_a_class():
    document = protocol.SCHEMA.document
    to_worker = {name for name, about in document["x-messages"].items()
                 if about["to"] in ("worker", "fork server", "zygote") or about["to"].startswith("the capture hook")}
    assert to_worker == set(CLASSES) == set(READERS)


def resolve(schema):
    while isinstance(schema, dict) and "$ref" in schema:
        schema = DEFS[schema["$ref"].split("/")[-1]]
    return schema


def nullable(schema):
    """(whether null is allowed, the schema of the rest)."""
    schema = resolve(schema)
    if "oneOf" in schema:
        rest = [a for a in schema["oneOf"] if resolve(a).get("type") != "null"]
        if len(rest) < len(schema["oneOf"]):
            return True, resolve(rest[0]) if len(rest) == 1 else {"oneOf": rest}
    if isinstance(schema.get("type"), list) and "null" in schema["type"]:
        rest = [t for t in schema["type"] if t != "null"]
        return True, {**schema, "type": rest[0] if len(rest) == 1 else rest}
    return False, schema


def unoptional(annotation):
    """(whether it allows None, the annotation without None)."""
    if typing.get_origin(annotation) is typing.Union and _NONE in typing.get_args(annotation):
        rest = [a for a in typing.get_args(annotation) if a is not _NONE]
        return True, rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]
    return False, annotation


def class_differences(cls, definition, path):
    """What differs between a frozen class and its definition (an object with properties)."""
    definition = resolve(definition)
    properties, required = definition.get("properties", {}), set(definition.get("required", []))
    members = {name: (attribute, no_default) for attribute, name, no_default in frozen_json.members(cls)}
    hints = typing.get_type_hints(cls)
    out = [f"{path}.{n}: in the schema, not in {cls.__name__}" for n in sorted(properties.keys() - members.keys())]
    out += [f"{path}.{n}: in {cls.__name__}, not in the schema" for n in sorted(members.keys() - properties.keys())]
    defaults = {f.name: f.default for f in cls.__dataclass_fields__.values()}
    for name in sorted(properties.keys() & members.keys()):
        attribute, no_default = members[name]
        if no_default != (name in required):
            out.append(f"{path}.{name}: {'required' if name in required else 'optional'} in the schema, "
                       f"{'without' if no_default else 'with'} a default in {cls.__name__}")
        absent_is_none = not no_default and defaults[attribute] is None
        out += member_differences(hints[attribute], properties[name], f"{path}.{name}", absent_is_none,
                                  name in PASS_THROUGHS)
    return out


def member_differences(annotation, schema, path, absent_is_none=False, pass_through=False):
    null, schema = nullable(schema)
    allows_none, inner = unoptional(annotation)
    if allows_none != (null or absent_is_none):
        return [f"{path}: None {'is' if allows_none else 'is not'} allowed by the class, "
                f"the schema {'allows null' if null else 'has no null'}"]
    if "const" in schema:
        return [] if inner == typing.Literal[schema["const"]] else [f"{path}: not Literal[{schema['const']!r}]"]
    if "oneOf" in schema:
        return alternatives_differences(inner, schema["oneOf"], path)
    kind = schema.get("type", "string" if "enum" in schema else None)
    if kind == "object" and "properties" in schema:
        if not frozen_json.is_frozen(inner):
            return [f"{path}: an object read by name, not a frozen class: {inner}"]
        return class_differences(inner, schema, path)
    if kind == "object":
        return map_differences(inner, schema, path, pass_through)
    if kind == "array":
        if typing.get_origin(inner) is not tuple or typing.get_args(inner)[1:] != (Ellipsis, ):
            return [f"{path}: an array, not Tuple[X, ...]: {inner}"]
        return member_differences(typing.get_args(inner)[0], schema["items"], f"{path}[]")
    expected = _SCALARS.get(kind)
    if inner is not expected:
        return [f"{path}: the schema's {kind}, the class's {_shown(inner)}"]
    return []


def map_differences(inner, schema, path, pass_through):
    """An object not read by name: the user's pass-through (an open dict), or a map of the user's
    names (Dict[str, X], additionalProperties X)."""
    if pass_through:
        return [] if inner is dict else [f"{path}: a pass-through, not a plain dict: {inner}"]
    if typing.get_origin(inner) is not dict:
        return [f"{path}: a map, not Dict[str, X]: {inner}"]
    return member_differences(typing.get_args(inner)[1], schema["additionalProperties"], f"{path}{{}}")


def alternatives_differences(inner, alternatives, path):
    classes = typing.get_args(inner) if typing.get_origin(inner) is typing.Union else ()
    if len(classes) != len(alternatives):
        return [f"{path}: {len(alternatives)} alternatives, the class's {inner}"]
    return [d for cls, alternative in zip(classes, alternatives) for d in class_differences(cls, alternative, path)]


def _shown(annotation):
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


def message_differences(kind):
    """What differs between the classes of a message the worker reads and its definition."""
    classes, definition = CLASSES[kind], DEFS[kind]
    if isinstance(classes, tuple):
        return alternatives_differences(typing.Union[classes], definition["oneOf"], kind)
    return class_differences(classes, definition, kind)


@pytest.mark.parametrize("kind", sorted(CLASSES))
def test_each_class_has_exactly_the_members_of_its_definition(kind):
    found = set(message_differences(kind))
    gaps = {gap for gap in KNOWN_GAPS if gap.startswith(f"{kind}.")}
    assert found - gaps == set()
    assert gaps - found == set(), "a known gap is mended: drop it from KNOWN_GAPS"


def test_a_member_on_one_side_only_fails(monkeypatch):
    """Planted in a copy of the schema: a new member of a nested object, one dropped, one made
    optional; each is named."""
    target = json.loads(json.dumps(DEFS["target"]))
    target["properties"]["cores"] = {"type": "integer"}
    del target["properties"]["warp_size"]
    target["required"] = ["backend", "arch", "cores"]
    kernel_ref = json.loads(json.dumps(DEFS["kernel_ref"]))
    kernel_ref["required"] = ["function"]
    monkeypatch.setitem(DEFS, "target", target)
    monkeypatch.setitem(DEFS, "kernel_ref", kernel_ref)
    found = message_differences("compile_request")
    assert "compile_request.target.cores: in the schema, not in Target" in found
    assert "compile_request.target.warp_size: in Target, not in the schema" in found
    assert "compile_request.kernel.import_root: optional in the schema, without a default in KernelRef" in found


TARGET = {"backend": "cuda", "arch": "90", "warp_size": 32}
HIP = {"backend": "hip", "arch": "gfx942", "warp_size": 64}
REF = {"file": "/k/kernels.py", "function": "axpy", "import_root": "/k", "pythonpath": ["/lib"]}
ZYGOTE = {"key": "cuda:90|/k|kernels", "any_target": "*|/k|kernels"}
LIMITS = {"max_threads_per_block": 1024, "max_shared_bytes_per_block": 232448, "max_registers_per_block": 65536,
          "max_registers_per_thread": 255, "register_allocation_unit": 256, "max_cluster_size": 16,
          "max_tensor_memory_columns": 512, "source": "data/launch-limits.toml"}
COMPILE = {"kind": "compile", "zygote": ZYGOTE, "kernel": REF, "row_name": "axpy", "signature": {"n": "i32"},
           "constants": {"BLOCK": 64}, "options": {"num_warps": 4}, "target": TARGET,
           "specialization": {"signature": {}}, "save_ir_dir": "/ir", "export_dir": "/export", "launch_limits": LIMITS}
FACTS = {"kernel": "axpy", "target": "cuda:90", "kind": "crash", "stage": "llir", "pass": "TritonGPUCoalesce",
         "fingerprint": "0123456789ab", "message": "boom", "tool": "triton-portcheck 0.2.0",
         "command": "triton-portcheck repro", "shrink_s": 5,
         "launch": {"needs": {"threads_per_block": 2048}, "limits": LIMITS, "problems": ["needs 2048 threads"]},
         "time_limit_s": 1.5, "max_rss_bytes": 1 << 30}
REPRO = {**{k: v for k, v in COMPILE.items() if k not in ("save_ir_dir", "export_dir", "launch_limits")},
         "kind": "repro", "zygote": None, "repro": FACTS}
FORK = {"op": "fork", "id": 7, "request": "r.json", "result": "o.json", "progress": "p", "stdout": "1", "stderr": "2",
        "timeout_ms": 60000, "max_rss_bytes": 1 << 32, "fresh": False, "compiles": True,
        "batch": [{"id": 8, "max_rss_bytes": 1 << 31, "request": "r8", "result": "o8", "progress": "p8",
                   "stdout": "18", "stderr": "28"}], "batch_log": "batch.log",
        "route": {"kind": "inspect", "zygote": ZYGOTE, "kernel": REF, "target": None,
                  "expects": [{"zygote": ZYGOTE, "kernel": REF, "target": TARGET}]}}
PERSONA = {"target": "hip:gfx942", "backend": "hip", "arch": "gfx942", "warp_size": 64, "capability": [9, 4],
           "name": "AMD Instinct MI300X", "gcnArchName": "gfx942:sramecc+:xnack-", "multi_processor_count": 304,
           "total_memory": 206158430208, "shared_memory_per_block": 65536, "shared_memory_per_block_optin": 65536,
           "shared_memory_per_multiprocessor": 65536, "max_threads_per_multi_processor": 2048,
           "L2_cache_size": 4194304, "regs_per_multiprocessor": 131072, "is_integrated": False,
           "sm_clock_rate": 2100000, "mem_clock_rate": 2600000, "mem_bus_width": 8192}
SAMPLES = [
    ("probe_request", {"protocol": protocol.PROTOCOL_VERSION, "targets": [TARGET, HIP], "predict": True,
                       "tool_version": "0.2.0"}),
    ("compile_request", COMPILE),
    ("compile_request", {**COMPILE, "zygote": None, "kernel": {"module": "pkg.kernels", "function": "f",
                                                               "import_root": "/k"}}),
    ("repro_request", REPRO),
    ("repro_request", {**REPRO, "repro": {**FACTS, "launch": None, "time_limit_s": None}}),
    ("inspect_request", {"kind": "inspect", "zygote": ZYGOTE, "kernels": [{"id": "axpy", "kernel": REF}],
                         "cells": [{"id": 0, "request": COMPILE}, {"id": 1, "request": REPRO}],
                         "targets": [TARGET], "keys": True, "predict": True, "tool_version": "0.2.0",
                         "target": TARGET}),
    ("server_command", {"op": "probe", "request": {"protocol": protocol.PROTOCOL_VERSION, "targets": [TARGET]}}),
    ("server_command", {"op": "warm", "targets": [TARGET, HIP]}),
    ("server_command", FORK),
    ("server_command", {**{k: v for k, v in FORK.items() if k not in ("batch", "batch_log")}, "route": None}),
    ("server_command", {"op": "quit"}),
    ("zygote_command", {"id": 7, "command": FORK}),
    ("zygote_command", {"warm": [TARGET]}),
    ("zygote_command", {"spawn": {"role": "package", "ref": REF, "target": TARGET, "data_limit": 1 << 30}}),
    ("zygote_command", {"spawn": {"role": "base", "ref": None, "target": None, "data_limit": None}}),
    ("zygote_event", {"event": "started", "pid": 10}),
    ("zygote_event", {"event": "ready", "driver_free": True, "threads": 1, "seconds": 2}),
    ("zygote_event", {"event": "unusable", "why": "ImportError: no torch", "seconds": 0.5}),
    ("zygote_event", {"event": "warmed", "seconds": 0.25}),
    ("zygote_event", {"event": "forked", "id": 7, "pid": 11, "threads": 3}),
    ("zygote_event", {"event": "exited", "pid": 11, "code": None, "signal": 9, "max_rss_bytes": 4096}),
    ("capture_persona", PERSONA),
] + [(case["definition"], case["message"]) for case in json.loads(CASES.read_text())["cases"]
     if case["problem"] is None and case["definition"] in CLASSES]


def typed_problems(value, annotation, path):
    """Where `value` is not of the Python type `annotation` names."""
    allows_none, inner = unoptional(annotation)
    if value is None:
        return [] if allows_none else [f"{path}: None"]
    origin, args = typing.get_origin(inner), typing.get_args(inner)
    if origin is typing.Literal:
        return [] if value in args else [f"{path}: {value!r} is not one of {args}"]
    if origin is typing.Union:
        return [] if isinstance(value, args) else [f"{path}: a {type(value).__name__}, not one of {args}"]
    if frozen_json.is_frozen(inner):
        if type(value) is not inner:
            return [f"{path}: a {type(value).__name__}, not a {inner.__name__}"]
        hints = typing.get_type_hints(inner)
        return [p for attribute in hints for p in typed_problems(getattr(value, attribute), hints[attribute],
                                                                 f"{path}.{attribute}")]
    if origin is tuple:
        if not isinstance(value, tuple):
            return [f"{path}: a {type(value).__name__}, not a tuple"]
        items = [args[0]] * len(value) if args[1:] == (Ellipsis, ) else list(args)
        return [p for i, (item, hint) in enumerate(zip(value, items)) for p in typed_problems(item, hint, f"{path}[{i}]")]
    if origin is dict or inner is dict:
        if not isinstance(value, dict):
            return [f"{path}: a {type(value).__name__}, not a dict"]
        return [p for k, v in value.items() for p in typed_problems(v, args[1], f"{path}{{{k}}}")] if args else []
    accepted = (int, float) if inner is float else inner
    if isinstance(value, bool) and inner is not bool or not isinstance(value, accepted):
        return [f"{path}: a {type(value).__name__}, not a {_shown(inner)}"]
    return []


@pytest.mark.parametrize("kind, raw", SAMPLES, ids=[f"{kind}-{i}" for i, (kind, _) in enumerate(SAMPLES)])
def test_a_sample_reads_into_its_class_with_every_member_typed_and_passes_on_unchanged(kind, raw):
    read = READERS[kind](raw)
    classes = CLASSES[kind] if isinstance(CLASSES[kind], tuple) else (CLASSES[kind], )
    assert type(read) in classes
    assert typed_problems(read, type(read), kind) == []
    # What the worker passes on (a fork command to a zygote, a zygote's exit to the tool) is the
    # message again; a member left out is one the reader takes as None.
    again = frozen_json.as_json(read)
    assert protocol.SCHEMA.problem(kind, again) is None
    assert READERS[kind](again) == read


@pytest.mark.parametrize("kind, raw", [
    ("compile_request", {**COMPILE, "target": {**TARGET, "warp_size": "32"}}),
    ("compile_request", {**COMPILE, "cores": 2}),
    ("inspect_request", {"kind": "inspect"}),
    ("capture_persona", {**PERSONA, "backend": "metal"}),
])
def test_a_message_that_breaks_the_schema_says_what_the_shared_checker_says(kind, raw):
    with pytest.raises(protocol.ProtocolError) as checked:
        protocol.check(kind, raw)
    with pytest.raises(protocol.ProtocolError) as read:
        READERS[kind](raw)
    assert str(read.value) == str(checked.value)


def test_a_cell_request_of_an_unknown_kind_is_refused_in_one_line():
    with pytest.raises(protocol.ProtocolError, match=r"a cell request of kind 'link' \(protocol \d+ knows "
                                                     r"\['compile', 'inspect', 'repro'\]\)"):
        messages.cell_request({**COMPILE, "kind": "link"})
    assert type(messages.cell_request(REPRO)) is messages.ReproRequest


def test_a_probe_of_another_protocol_is_a_mismatch_before_any_member_is_checked():
    with pytest.raises(protocol.ProtocolMismatch, match="protocol mismatch: triton-portcheck speaks protocol 1,"):
        channel_messages.server_command({"op": "probe", "request": {"protocol": 1, "tragets": []}})
    with pytest.raises(protocol.ProtocolError, match="probe_request breaks protocol"):
        channel_messages.server_command({"op": "probe", "request": {"protocol": protocol.PROTOCOL_VERSION}})
