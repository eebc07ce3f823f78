"""How a message the worker reads becomes a frozen dataclass, and the JSON it stands for again.

messages.py declares one class per message (and per object a message carries that the worker
reads by name); `frozen` plans its conversion once, when the class is made, from its annotations:
a member that is itself a frozen class is converted into it, an array into a tuple, an
alternative of several classes (`Union[A, B]`) by the member each one fixes with a `Literal`,
and everything else (strings, numbers, booleans, the user's own pass-through dicts) is kept as
the JSON had it. The conversion checks nothing: protocol.check has held the message to the
schema first (messages.read), so a member is where and what the schema says.

A cell forked from a zygote converts its request after the user's module ran its import, which
may have replaced `dataclasses` or `typing`: those are used here only while the worker's own
modules are imported; a conversion calls the classes' own __init__ (made then) and builtins.
"""
import dataclasses
import keyword
import sys
import typing

# Bound now: a forked cell converts its request after the user's import, which may rebind the
# builtins.
_tuple, _zip = tuple, zip


# __slots__ where Python's dataclasses make them (3.10); the worker also runs on 3.9.
_SLOTS = {"slots": True} if sys.version_info >= (3, 10) else {}
_ABSENT = object()
_NONE_TYPE = type(None)


class _Member:
    """One member of a frozen class: its attribute, its name in the JSON (`pass` is the attribute
    `pass_`), its conversion (None: kept as read), and what it is when the JSON lacks it."""

    __slots__ = ("attribute", "name", "convert", "default", "required")

    def __init__(self, field, annotation):
        self.attribute = field.name
        stem = field.name[:-1]
        self.name = stem if field.name.endswith("_") and keyword.iskeyword(stem) else field.name
        self.convert = _converter(annotation)
        # A member with no default is one the schema requires (test_worker_messages.py holds the
        # two to each other); where a check did not come first, its absence reads as None.
        self.required = field.default is dataclasses.MISSING
        self.default = None if self.required else field.default


# The members of each frozen class, in declaration order.
_PLANS = {}


def frozen(cls):
    """The class decorator of messages.py: a frozen dataclass whose conversion is planned now."""
    cls = dataclasses.dataclass(frozen=True, **_SLOTS)(cls)
    hints = typing.get_type_hints(cls)
    _PLANS[cls] = tuple(_Member(field, hints[field.name]) for field in dataclasses.fields(cls))
    return cls


def is_frozen(annotation):
    """Whether it is a class `frozen` made."""
    return annotation in _PLANS


def members(cls):
    """(attribute, JSON name, required) of each member of a frozen class."""
    return [(m.attribute, m.name, m.required) for m in _PLANS[cls]]


def convert(cls, raw):
    """`raw`, a JSON object checked against its definition, as a `cls`."""
    values = {}
    get = raw.get
    for member in _PLANS[cls]:
        value = get(member.name, _ABSENT)
        if value is _ABSENT:
            value = member.default
        elif value is not None and member.convert is not None:
            value = member.convert(value)
        values[member.attribute] = value
    return cls(**values)


def as_json(value):
    """The JSON a frozen value stands for (nested ones and tuples included): for a message the
    worker passes on (a fork command to a zygote) or hashes. A member that is None is left out,
    unless the schema requires it (then it is the JSON's null)."""
    plan = _PLANS.get(type(value))
    if plan is not None:
        out = {}
        for member in plan:
            item = getattr(value, member.attribute)
            if item is not None or member.required:
                out[member.name] = as_json(item)
        return out
    if isinstance(value, tuple):
        return [as_json(item) for item in value]
    return value


def _converter(annotation):
    """How a present, non-null member of this annotation is converted; None: it is kept."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union:
        alternatives = [a for a in args if a is not _NONE_TYPE]
        if len(alternatives) == 1:  # Optional[X]: a null is None before any conversion
            return _converter(alternatives[0])
        return _alternatives(alternatives)
    if is_frozen(annotation):
        return lambda raw: convert(annotation, raw)
    if origin is tuple:
        return _array(args)
    return None


def _array(args):
    if len(args) == 2 and args[1] is Ellipsis:
        item = _converter(args[0])
        if item is None:
            return _tuple
        return lambda raw: _tuple([item(value) for value in raw])
    items = [_converter(a) or (lambda value: value) for a in args]  # a fixed tuple: [a, b]
    return lambda raw: _tuple([convert_item(value) for convert_item, value in _zip(items, raw)])


def _alternatives(classes):
    """Union[A, B, ...] of frozen classes: each fixes one member with a Literal (its "kind",
    "op" or "event"); the JSON's value of that member says which class it is."""
    fixed = {cls: literal_of(cls) for cls in classes}
    name = next(iter(fixed.values()))[0]
    by_value = {value: cls for cls, (_, value) in fixed.items()}
    return lambda raw: convert(by_value[raw[name]], raw)


def literal_of(cls):
    """(JSON name, value) of the member a frozen class fixes with a Literal, or None."""
    hints = typing.get_type_hints(cls)
    for member in _PLANS[cls]:
        if typing.get_origin(hints[member.attribute]) is typing.Literal:
            return member.name, typing.get_args(hints[member.attribute])[0]
    return None
