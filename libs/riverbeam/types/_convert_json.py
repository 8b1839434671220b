"""A wire model's compact JSON text, written from its attributes where that gives the same text.

`WireModel.to_json()` encodes `model_dump(mode="json")`, and WireModel's wrap serializer
(`_omit_empty`) runs in Python for every nested model, asking for each key its attribute and
field: a streamed chunk frame costs ~284k instructions, a done frame ~304k (callgrind), and a
streamed run publishes at least two. `to_json_text` writes the same text from the attributes
by a plan made once per model class, run as one generated function (its fields' reads, checks
and writes spelled out in order, as _convert_build_gen does for from_proto). It writes the
text itself rather than a dict for json's encoder: the encoder's walk of the dict (~60k
instructions for a done frame) costs twice what writing its pieces does, and a piece is what
the encoder writes for it (the same string escaping, float and int repr, separators).

A plan covers only what it knows JSON mode keeps as it is, or makes as pydantic makes it: a
str, int, bool or finite float of exactly that type, a Literal's str, a datetime (pydantic's
own datetime serializer), a nested model or a list of them of exactly the declared class, and
free-form JSON (Any, dict[str, Any]) of plain JSON values only (str keys, no tuple, no NaN),
which the encoder writes. A model with anything else (a serializer of its own, a computed or
excluded field, another config, an annotation not listed) has no plan, and any value a plan
doubts (a subclass, an int in a float field, an infinity) gives up on the whole model:
`to_json()` then. The omission rules are `_omit_empty`'s: None is left out, and an empty list
or dict held by a field not typed Any, except the model's `_always` keys.
tests/unit/types/test_types_convert_json.py compares the text with `to_json()` over generated
values of every wire type.
"""

from __future__ import annotations

import math
import threading
import types
from collections.abc import Callable
from datetime import datetime
from json.encoder import encode_basestring
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import AfterValidator, AwareDatetime, BaseModel, StringConstraints, WithJsonSchema
from pydantic.fields import FieldInfo
from pydantic_core import SchemaSerializer, core_schema

from riverbeam.types._base import _COMPACT_JSON, WireModel
from riverbeam.types._convert import generated, indented
from riverbeam.types._convert_build import _BASE_CONFIG, _HARMLESS_CONFIG

__all__ = ["planned_text", "to_json_text"]

# A plan's generated function: the model's JSON text.
Dump = Callable[[Any], str]
# How a field's (non-None) value is checked and written, and the op's argument.
_STR, _INT, _BOOL, _FLOAT, _TIME, _JSON, _OBJECT, _MODEL, _LIST = range(9)
_Kind = tuple[int, Any]


class _Doubt(Exception):
    """A value the plan does not know JSON mode keeps: the model's to_json() decides."""


# Metadata that only validates (or documents) a value: the JSON of a valid value is unchanged.
_VALIDATING = (AfterValidator, StringConstraints, WithJsonSchema, Ge, Gt, Le, Lt, MinLen, MaxLen)
_DATETIME = SchemaSerializer(core_schema.datetime_schema())
# What json's encoder writes for a str, an int and a finite float of exactly those types (the C
# encoder calls these very functions; _COMPACT_JSON does not escape non-ASCII characters).
_STR_TEXT = encode_basestring
_INT_TEXT = int.__repr__
_FLOAT_TEXT = float.__repr__

# model class -> its plan's generated function, or None (no plan: to_json()).
_PLANS: dict[type[Any], Dump | None] = {}
# The classes whose plan may write a null: an `_always` field that may be None, in the class
# or in a model it holds (model_dump_json(exclude_none=True) leaves those out).
_WRITES_NULL: set[type[Any]] = set()
_MAKING: set[type[Any]] = set()
_LOCK = threading.RLock()


def to_json_text(model: WireModel) -> str:
    """`model.to_json()`: the same text, from the attributes when the model's class has a plan."""
    text = planned_text(model)
    return model.to_json() if text is None else text


def planned_text(model: BaseModel, *, without_nulls: bool = False) -> str | None:
    """The text of `model` its class's plan writes (`to_json()`'s), or None: no plan, or a
    value the plan doubts; with `without_nulls`, also a class whose plan may write a null.

    A free-form value too deep or circular for the plan's check raises as json's encoder does
    (RecursionError, ValueError)."""
    cls = type(model)
    if cls in _PLANS:
        dump = _PLANS[cls]
    else:
        with _LOCK:
            dump = _plan(cls)
    if dump is None or (without_nulls and cls in _WRITES_NULL):
        return None
    try:
        return dump(model)
    except (_Doubt, KeyError):  # KeyError: a field missing from __dict__ (deleted)
        return None


# ---- plans ------------------------------------------------------------------------------------


def _plan(cls: type[Any]) -> Dump | None:
    """The generated function of cls (made once; None: no plan). Called with _LOCK held."""
    if cls in _PLANS:
        return _PLANS[cls]
    if cls in _MAKING:
        return None  # a recursive model: left to to_json()
    _MAKING.add(cls)
    try:
        dump = _make_plan(cls)
    finally:
        _MAKING.discard(cls)
    _PLANS[cls] = dump
    return dump


def _make_plan(cls: type[Any]) -> Dump | None:
    if not (isinstance(cls, type) and issubclass(cls, WireModel)):
        return None
    config = cls.model_config
    if any(config.get(k) != v for k, v in _BASE_CONFIG.items()):
        return None
    if set(config) - set(_BASE_CONFIG) - _HARMLESS_CONFIG:
        return None
    decorators = cls.__pydantic_decorators__
    serializers = decorators.model_serializers
    if (
        decorators.field_serializers
        or decorators.computed_fields
        or set(serializers) != {"_omit_empty"}
        or serializers["_omit_empty"].func is not _omit_empty_of(WireModel)
        or cls.__pydantic_root_model__
    ):
        return None
    env: dict[str, Any] = {
        "_Doubt": _Doubt,
        "_datetime": datetime,
        "_time": _DATETIME.to_python,
        "_json": _json,
        "_json_object": _json_object,
        "_str": _STR_TEXT,
        "_int": _INT_TEXT,
        "_float": _FLOAT_TEXT,
        "_encode": _COMPACT_JSON.encode,
    }
    lines = ["def dump(model):", "    d = model.__dict__", "    out = []"]
    writes_null = False
    for name, info in cls.model_fields.items():
        kind = _field(info)
        if kind is None:
            return None
        nullable, empty = _shape(info.annotation)
        always = name in cls._always
        writes_null = writes_null or (always and nullable) or _holds_null_writer(kind)
        made = _field_lines(name, kind, always, nullable, empty, env)
        lines += [f"    {line}" for line in made]
    lines.append("    return '{' + ','.join(out) + '}'")
    dump: Dump = generated(lines, env)
    if writes_null:
        _WRITES_NULL.add(cls)
    return dump


def _holds_null_writer(kind: _Kind) -> bool:
    """Whether a field of this kind holds a model (or a list of them) whose plan may write a
    null; a held model's plan is made before its holder's."""
    op, arg = kind
    if op == _MODEL:
        return arg[0] in _WRITES_NULL
    return op == _LIST and _holds_null_writer(arg)


def _omit_empty_of(base: type[Any]) -> Any:
    return base.__pydantic_decorators__.model_serializers["_omit_empty"].func


def _field(info: FieldInfo) -> _Kind | None:
    if info.exclude or info.serialization_alias is not None:
        return None
    if not all(isinstance(m, _VALIDATING) for m in info.metadata):
        return None
    return _kind(info.annotation)


def _shape(annotation: Any) -> tuple[bool, type[Any] | None]:
    """Whether a field of annotation may hold None, and the empty container it leaves out: []
    for a list field, {} for an object field, none for the others (a free-form field keeps
    both, and any other field holding one is a doubt)."""
    if annotation is Any:
        return True, None
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType):
        arms = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(arms) < len(get_args(annotation))
        annotation = arms[0]  # one arm: _kind made sure
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    origin = get_origin(annotation)
    return nullable, origin if origin in (list, dict) else None


_EXACT = {str: _STR, int: _INT, bool: _BOOL, float: _FLOAT}


def _kind(annotation: Any) -> _Kind | None:
    """How JSON mode writes a (non-None) value of annotation, or None: no plan."""
    if get_origin(annotation) is Annotated:
        inner, *metadata = get_args(annotation)
        if not all(isinstance(m, _VALIDATING) for m in metadata):
            return None
        return _kind(inner)
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        arms = [a for a in get_args(annotation) if a is not type(None)]
        return _kind(arms[0]) if len(arms) == 1 else None
    if annotation is Any:
        return (_JSON, None)
    if annotation in _EXACT:
        return (_EXACT[annotation], None)
    if annotation is datetime or annotation is AwareDatetime:
        return (_TIME, None)
    if origin is Literal:
        return (_STR, None) if all(type(a) is str for a in get_args(annotation)) else None
    if origin is dict:
        key, value = get_args(annotation)
        return (_OBJECT, None) if key is str and value is Any else None
    if origin is list:
        (item,) = get_args(annotation)
        inner_kind = _kind(item)
        return None if inner_kind is None else (_LIST, inner_kind)
    if isinstance(annotation, type):
        dump = _plan(annotation)
        return None if dump is None else (_MODEL, (annotation, dump))
    return None


# ---- the generated text -----------------------------------------------------------------------


def _field_lines(
    name: str,
    kind: _Kind,
    always: bool,
    nullable: bool,
    empty: type[Any] | None,
    env: dict[str, Any],
) -> list[str]:
    """Lines adding the field's `"name":value` text to `out` as _omit_empty leaves it: None left
    out (or written, for an `_always` key), an empty list or object left out, anything
    doubtful raised."""
    key = _STR_TEXT(name) + ":"
    if not nullable:
        none = ["raise _Doubt"]  # None where the type has none: pydantic warns, or refuses
    elif always:
        none = [f"out.append({key + 'null'!r})"]
    else:
        none = ["pass"]
    write = [*_check_lines(kind, "v", env, 0), f"out.append({key!r} + v)"]
    lines = [f"v = d[{name!r}]", "if v is None:", *indented(none)]
    if empty is not None and not always:
        lines += [f"elif not v and type(v) is {empty.__name__}:", "    pass"]
    return [*lines, "else:", *indented(write)]


def _check_lines(kind: _Kind, var: str, env: dict[str, Any], depth: int) -> list[str]:
    """Lines that check `var` and leave the JSON text of its JSON-mode value in it, raising
    _Doubt on a doubt."""
    op, arg = kind
    if op in (_STR, _INT):
        exact, text = {_STR: ("str", "_str"), _INT: ("int", "_int")}[op]
        return [f"if type({var}) is not {exact}:", "    raise _Doubt", f"{var} = {text}({var})"]
    if op == _BOOL:
        return [
            f"if type({var}) is not bool:",
            "    raise _Doubt",
            f"{var} = 'true' if {var} else 'false'",
        ]
    if op == _FLOAT:
        # An infinity is written as null and an int as an int: to_json() decides.
        return [
            f"if type({var}) is not float or {var} - {var} != 0.0:",
            "    raise _Doubt",
            f"{var} = _float({var})",
        ]
    if op == _TIME:
        return [
            f"if type({var}) is not _datetime:",
            "    raise _Doubt",
            f"{var} = _str(_time({var}, mode='json'))",
        ]
    # Free-form JSON, once checked to be plain, is written by the encoder.
    if op == _JSON:
        return [f"{var} = _encode(_json({var}))"]
    if op == _OBJECT:
        return [f"{var} = _encode(_json_object({var}))"]
    if op == _MODEL:
        cls, dump = arg
        key = f"{len(env)}"
        env[f"_cls{key}"], env[f"_dump{key}"] = cls, dump
        return [
            f"if type({var}) is not _cls{key}:",
            "    raise _Doubt",
            f"{var} = _dump{key}({var})",
        ]
    item, items = f"x{depth}", f"items{depth}"
    return [
        f"if type({var}) is not list:",
        "    raise _Doubt",
        f"{items} = []",
        f"for {item} in {var}:",
        *indented([*_check_lines(arg, item, env, depth + 1), f"{items}.append({item})"]),
        f"{var} = '[' + ','.join({items}) + ']'",
    ]


# ---- free-form values ---------------------------------------------------------------------------


def _finite(value: Any) -> Any:
    if type(value) is not float or not math.isfinite(value):
        raise _Doubt  # an infinity is written as null, an int as an int: to_json() decides
    return value


def _json(value: Any) -> Any:
    """A free-form value: plain JSON only, which JSON mode gives back as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return _finite(value)
    if kind is list:
        for item in value:
            _json(item)
        return value
    if kind is dict:
        return _json_object(value)
    raise _Doubt


def _json_object(value: Any) -> Any:
    if type(value) is not dict:
        raise _Doubt
    for key, item in value.items():
        if type(key) is not str:
            raise _Doubt
        _json(item)
    return value
