"""Checks JSON values against a JSON Schema (draft 2020-12), the subset that describes the shape
of messages: type, properties, required, additionalProperties, items, enum, const, oneOf, minimum,
minLength (in characters) and $ref to "#/$defs/NAME". A schema using any other keyword that constrains is refused when it is loaded,
so that a schema never promises more than is checked. util/json_schema.cpp is the same subset in
C++, with the same messages; a test holds the two to the same answers.

Standard library only, and nothing of Triton's: the worker checks every request it reads with it.
"""
import json
import math

# Bound now: a user's module may replace json.dumps after the worker imported this one.
_json_dumps = json.dumps

_CHECKED = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "oneOf", "$ref",
            "minimum", "minLength"}
_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "examples", "default", "$defs"}
_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number",
               float: "number", type(None): "null"}


class SchemaError(ValueError):
    """The schema itself uses a keyword this checker does not check, or a $ref it cannot resolve."""


class Schema:

    def __init__(self, document):
        self.document = document
        _verify_keywords(document, "#")
        self._verify_refs(document)

    def defines(self, definition):
        return definition in self.document.get("$defs", {})

    def problem(self, definition, value):
        """Why `value` is not an instance of $defs[definition], naming the member
        ("compile_result.stages.ttir: expected number, found string"); None when it is one."""
        if not self.defines(definition):
            raise SchemaError(f'the schema defines no "{definition}"')
        return self._check(self.document["$defs"][definition], value, definition)

    def _resolve(self, ref):
        prefix = "#/$defs/"
        if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix):] in self.document.get("$defs", {}):
            return self.document["$defs"][ref[len(prefix):]]
        raise SchemaError(f"$ref {_dump(ref)} does not name a definition")

    def _verify_refs(self, node):
        if isinstance(node, dict):
            if "$ref" in node:
                self._resolve(node["$ref"])
            for key, sub in node.items():
                if key not in ("examples", "const", "enum", "default"):
                    self._verify_refs(sub)
        elif isinstance(node, list):
            for sub in node:
                self._verify_refs(sub)

    def _check(self, schema, value, path):
        if isinstance(schema, bool):
            return None if schema else f"{path}: no value is allowed here"
        if "$ref" in schema:
            found = self._check(self._resolve(schema["$ref"]), value, path)
            if found:
                return found
        if "type" in schema:
            found = _check_type(schema["type"], value, path)
            if found:
                return found
        if "const" in schema and not _equal(schema["const"], value):
            return f"{path}: expected {_dump(schema['const'])}, found {_dump(value)}"
        if "enum" in schema and not any(_equal(option, value) for option in schema["enum"]):
            return f"{path}: {_dump(value)} is not one of {_dump(schema['enum'])}"
        found = _check_bounds(schema, value, path)
        if found:
            return found
        if isinstance(value, dict):
            found = self._check_object(schema, value, path)
            if found:
                return found
        if "items" in schema and isinstance(value, list):
            for index, item in enumerate(value):
                found = self._check(schema["items"], item, f"{path}[{index}]")
                if found:
                    return found
        if "oneOf" in schema:
            return self._check_one_of(schema, value, path)
        return None

    def _check_object(self, schema, value, path):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                return f'{path}: missing member "{name}"'
        extra = schema.get("additionalProperties", True)
        for key, member in value.items():
            if key in properties:
                found = self._check(properties[key], member, f"{path}.{key}")
            elif extra is False:
                found = f'{path}: unexpected member "{key}"'
            else:
                found = self._check(extra, member, f"{path}.{key}")
            if found:
                return found
        return None

    def _check_one_of(self, schema, value, path):
        """Exactly one alternative must match. When none does, the message is that of the
        alternative the value names - by a member with a "const" (a message's "op" or "event"),
        else as the only one whose required members it has, else as the only one of its type -
        which says what is wrong with it; without one, the alternatives' count."""
        alternatives = [self._resolve(a["$ref"]) if isinstance(a, dict) and "$ref" in a else a
                        for a in schema["oneOf"]]
        problems = [self._check(a, value, path) for a in schema["oneOf"]]
        matches = problems.count(None)
        if matches == 1:
            return None
        if matches > 1:
            return f"{path}: matches {matches} alternatives, not one"
        named = _named_alternative(alternatives, value)
        if named is not None:
            return problems[named]
        return f"{path}: matches none of its {len(alternatives)} alternatives"


def _check_bounds(schema, value, path):
    if "minimum" in schema and _has_type(value, "number") and value < schema["minimum"]:
        return f"{path}: {_dump(value)} is less than {_dump(schema['minimum'])}"
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        return f"{path}: {_dump(value)} is shorter than {_dump(schema['minLength'])} characters"
    return None


def _named_alternative(alternatives, value):
    """The index of the alternative `value` names (see _check_one_of), or None."""
    if isinstance(value, dict):
        for index, alternative in enumerate(alternatives):
            for key, prop in _properties(alternative).items():
                if isinstance(prop, dict) and "const" in prop and key in value and _equal(value[key], prop["const"]):
                    return index
        having = [i for i, a in enumerate(alternatives)
                  if isinstance(a, dict) and a.get("required") and all(k in value for k in a["required"])]
        if len(having) == 1:
            return having[0]
    typed = [i for i, a in enumerate(alternatives) if isinstance(a, dict) and "type" in a
             and _check_type(a["type"], value, "") is None]
    return typed[0] if len(typed) == 1 else None


def _properties(schema):
    return schema.get("properties", {}) if isinstance(schema, dict) else {}


def _verify_keywords(schema, where):
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object")
    for key, value in schema.items():
        if key not in _CHECKED and key not in _ANNOTATIONS and not key.startswith("x-"):
            raise SchemaError(f'{where}: keyword "{key}" is not checked')
        if key in ("properties", "$defs"):
            for name, sub in value.items():
                _verify_keywords(sub, f"{where}/{key}/{name}")
        elif key == "oneOf":
            for index, sub in enumerate(value):
                _verify_keywords(sub, f"{where}/{key}/{index}")
        elif key in ("items", "additionalProperties"):
            _verify_keywords(value, f"{where}/{key}")


def _has_type(value, name):
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value == math.floor(value))
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return _type_name(value) == name


def _check_type(types, value, path):
    types = types if isinstance(types, list) else [types]
    if any(_has_type(value, name) for name in types):
        return None
    return f"{path}: expected {' or '.join(types)}, found {_type_name(value)}"


def _type_name(value):
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _equal(a, b):
    """JSON equality: true is not 1 (Python says it is)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def _dump(value):
    """The value as the C++ side's nlohmann::json::dump() writes it, for the same messages."""
    return _json_dumps(value, separators=(",", ":"), ensure_ascii=False)
