"""The generated function of a _convert_build plan: a message -> the model, written out.

_convert_build decides, once per (model, message type), how each model field is read from the
message, checked as its annotation validates, and what it is when unset; this module writes
that out as the source of one function per plan (as _convert_to does for its plans), built
with exec from our own text. Each field reads its value straight from the message (a getattr,
and a HasField only where presence is in doubt: callgrind counts one ListFields of a running
Run at ~22.6k instructions, a getattr ~0.7k, a HasField ~1.1k) and is checked inline; a
repeated field is iterated over its slice (a list), since iterating a upb container raises and
swallows an IndexError at its end (1-item container: `for` 3.6k, `list()` 4.5k, an index loop
2.7k, a slice 1.9k).

Which fields the model counts as set (its fields_set) are those the reference dict would hold:
a present field, a repeated field, or one without presence whose printed default is the value.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from riverbeam.types import _convert_from as _from
from riverbeam.types._convert import EXACT, Fallback, generated, indented

__all__ = [
    "ANY_VALUE",
    "ENUM",
    "MESSAGE",
    "MESSAGES",
    "NUMBER",
    "STRING",
    "STRS",
    "STRUCT",
    "TIME",
    "Check",
    "Field",
    "compiled",
    "converter",
]

# How a read value is checked and converted (Check.op), and its arguments (Check.args):
STRING = 0  # (nonempty, literal | None, after | None)
ENUM = 1  # ({number: label}, literal | None)
NUMBER = 2  # (is_float, ((op, limit), ...)) with op one of GT, GE, LT, LE
TIME = 3  # ()
STRUCT = 4  # (after | None,)
ANY_VALUE = 5  # ()
STRS = 6  # ()
MESSAGE = 7  # (the nested plan's function, or None: no plan)
MESSAGES = 8  # (as MESSAGE)
GT, GE, LT, LE = range(4)

# What an unset field gives (Field.unset[0]): its default (left out of the dict), a value, a new
# list, or a refusal (required, or a printed default validation refuses).
UNSET_ABSENT, UNSET_VALUE, UNSET_FRESH, UNSET_REFUSED = range(4)


class Check(NamedTuple):
    op: int
    args: tuple[Any, ...]


class Field(NamedTuple):
    name: str
    read: int | None  # the _convert_from kind it is read with; None: not in the message
    proto: Any  # its message field's FieldDescriptor (None: not in the message)
    check: Check | None  # None: the value as read is the value validation gives
    unset: tuple[int, Any]  # (UNSET_*, the value for UNSET_VALUE)
    default: Any  # UNSET_ABSENT: the model's default ...
    factory: Callable[[], Any] | None  # ... or its default factory


Builder = Callable[[Any], Any]

_OPS = {GT: ">", GE: ">=", LT: "<", LE: "<="}


def converter(check: Check) -> Callable[[Any], Any]:
    """check as a function of one value (for the value of an unset field, made once)."""
    env = _env()
    lines = ["def convert(v):", *indented([*_check_lines(0, check, env), "return v"])]
    convert: Callable[[Any], Any] = generated(lines, env)
    return convert


def compiled(cls: type[Any], slots: Any, fields: tuple[Field, ...], listed: bool) -> Builder:
    """The function that builds cls from a message as the fields say, raising on any doubt.

    listed: the set fields are found with one ListFields (a dict of field descriptor ->
    value), not a getattr (and HasField) for each field.
    """
    env = _env()
    alloc, env["_set_dict"], env["_set_fields"], env["_set_extra"], env["_set_private"] = slots
    env["_alloc"], env["_cls"] = alloc, cls
    always = [f.name for f in fields if _always_set(f)]
    start = f"{{{', '.join(map(repr, always))}}}" if always else "set()"
    lines = ["def build(msg):", f"    fields = {start}"]
    if listed:
        lines.append("    got = dict(msg.ListFields())")
    for i, field in enumerate(fields):
        add = field.name not in always
        made = _listed_lines(i, field, add, env) if listed else _field_lines(i, field, add, env)
        lines += [f"    {line}" for line in made]
        lines.append(f"    f{i} = v")
    items = ", ".join(f"{field.name!r}: f{i}" for i, field in enumerate(fields))
    lines += [
        "    model = _alloc(_cls)",
        f"    _set_dict(model, {{{items}}})",
        "    _set_fields(model, fields)",
        "    _set_extra(model, None)",
        "    _set_private(model, None)",
        "    return model",
    ]
    build: Builder = generated(lines, env)
    return build


def _env() -> dict[str, Any]:
    return {
        "Fallback": Fallback,
        "_EXACT": EXACT,
        "_STAMPS": _from._STAMPS,  # emptied in place, never replaced
        "_time": _time,
        "_struct": _from._struct,
        "_value": _from._value,
    }


def _time(stamp: Any) -> Any:
    value = _from._time(stamp, True)
    if type(value) is not datetime:
        raise Fallback  # nanoseconds: the text is validated
    # In UTC already: UtcDatetime's astimezone(UTC) would give back this very object.
    return value


def _always_set(field: Field) -> bool:
    """Whether every message that builds counts the field as set (else: when present)."""
    # A required field is present whenever the build goes on.
    return field.read is not None and field.unset[0] != UNSET_ABSENT


def _field_lines(i: int, field: Field, add: bool, env: dict[str, Any]) -> list[str]:
    """Lines leaving the field's value in v; `add`: a present one is added to fields."""
    name, read = field.name, field.read
    plain = name.isidentifier() and not keyword.iskeyword(name)
    get = f"msg.{name}" if plain else f"getattr(msg, {name!r})"
    unset = _unset_lines(i, field, env)
    if read is None:
        return unset
    check = _check_lines(i, field.check, env) if field.check is not None else []
    present = [*check, f"fields.add({name!r})"] if add else check
    if read in (_from._STRS, _from._MSGS):
        return [f"v = {get}", *check]  # a list either way: empty when unset
    if read in (_from._BOOL, _from._INT) and field.check is None and field.unset[0] == UNSET_VALUE:
        return [f"v = {get}"]  # unset: the default read is the value
    first: list[str] = []
    if read in (_from._MSG, _from._TIME, _from._STRUCT, _from._VALUE):
        test, present = f"msg.HasField({name!r})", [f"v = {get}", *present]
    else:
        # A scalar: truthy when set, but for "", 0 and -0.0; with presence only those ask
        # HasField. Without presence the default is unset.
        test = f"v or msg.HasField({name!r})" if read in (_from._OPT, _from._OPT_DOUBLE) else "v"
        first = [f"v = {get}"]
    if field.unset[0] == UNSET_REFUSED:
        return [*first, f"if not ({test}):", "    raise Fallback", *present]
    return [*first, f"if {test}:", *indented(present), "else:", *indented(unset)]


def _listed_lines(i: int, field: Field, add: bool, env: dict[str, Any]) -> list[str]:
    """As _field_lines, the field's value found in `got` (what ListFields lists)."""
    unset = _unset_lines(i, field, env)
    if field.read is None:
        return unset
    env[f"_fd{i}"] = field.proto
    check = _check_lines(i, field.check, env) if field.check is not None else []
    present = [f"v = got[_fd{i}]", *check]
    if add:
        present.append(f"fields.add({field.name!r})")
    if field.unset[0] == UNSET_REFUSED:
        return [f"if _fd{i} not in got:", "    raise Fallback", *present]
    return [f"if _fd{i} in got:", *indented(present), "else:", *indented(unset)]


def _unset_lines(i: int, field: Field, env: dict[str, Any]) -> list[str]:
    how, value = field.unset
    if how == UNSET_REFUSED:
        return ["raise Fallback"]  # validation reports what is missing (or refuses it)
    if how == UNSET_FRESH:
        return ["v = []"]
    if how == UNSET_VALUE:
        env[f"_u{i}"] = value
        return [f"v = _u{i}"]
    if field.factory is not None:
        env[f"_df{i}"] = field.factory
        return [f"v = _df{i}()"]
    env[f"_d{i}"] = field.default
    return [f"v = _d{i}"]


def _check_lines(i: int, check: Check, env: dict[str, Any]) -> list[str]:
    """Lines that check and convert v as validation would, raising Fallback on any doubt."""
    op, args = check
    if op == STRING:
        nonempty, literal, after = args
        lines = ["if not v:", "    raise Fallback"] if nonempty else []  # "" is too short
        if literal is not None:
            env[f"_lit{i}"] = literal
            lines += [f"if v not in _lit{i}:", "    raise Fallback"]
        if after is not None:
            env[f"_after{i}"] = after
            lines.append(f"v = _after{i}(v)")
        return lines
    if op == ENUM:
        labels, literal = args
        env[f"_labels{i}"] = labels
        # An unknown number, a name the model does not know, or ..._UNSPECIFIED under another
        # number (absent in the dict): validation decides.
        test = "type(v) is not str"
        if literal is not None:
            env[f"_lit{i}"] = literal
            test += f" or v not in _lit{i}"
        return [f"v = _labels{i}.get(v, v)", f"if {test}:", "    raise Fallback"]
    if op == NUMBER:
        is_float, bounds = args
        lines = []
        if is_float:
            # As validation reads _convert_from's value: an integral double comes as int and is
            # made a float again (-0.0 as 0.0); NaN and infinities are refused.
            lines += [
                "if v - v != 0.0:",
                "    raise Fallback",
                "if v.is_integer() and abs(v) < _EXACT:",
                "    v = float(int(v))",
            ]
        for j, (bound, limit) in enumerate(bounds):
            env[f"_lim{i}_{j}"] = limit
            lines += [f"if not v {_OPS[bound]} _lim{i}_{j}:", "    raise Fallback"]
        return lines
    if op == TIME:
        # A datetime made of the same instant before is shared (_convert_from._time); only
        # stamps it accepted are there.
        return ["v = _STAMPS.get((v.seconds, v.nanos)) or _time(v)"]
    if op == STRUCT:
        (after,) = args
        if after is None:
            return ["v = _struct(v)"]
        env[f"_after{i}"] = after
        return [f"v = _after{i}(_struct(v))"]
    if op == ANY_VALUE:
        return ["v = _value(v)"]
    if op == STRS:
        return ["v = v[:]"]  # a new list
    (nested,) = args
    if op == MESSAGE:
        if nested is None:
            return ["raise Fallback"]  # a nested model without a plan: validated
        env[f"_nested{i}"] = nested
        return [f"v = _nested{i}(v)"]
    if nested is None:
        return ["if v:", "    raise Fallback", "v = []"]
    env[f"_nested{i}"] = nested
    return ["items = v[:]", "v = []", "for item in items:", f"    v.append(_nested{i}(item))"]
