"""A wire model's compact JSON text, made from its attributes where that gives the same text.

`WireModel.to_json()` encodes `model_dump(mode="json")`, and WireModel's wrap serializer
(`_omit_empty`) runs in Python for every nested model, asking for each key its attribute and
field: a streamed chunk frame costs ~284k instructions, a done frame ~304k (callgrind), and a
streamed run publishes at least two. `to_json_text` makes the same dict from the attributes by
a plan made once per model class, and encodes it with the same encoder.

A plan covers only what it knows JSON mode keeps as it is, or makes as pydantic makes it: a
str, int, bool or finite float of exactly that type, a Literal's str, a datetime (pydantic's
own datetime serializer), a nested model or a list of them of exactly the declared class, and
free-form JSON (Any, dict[str, Any]) of plain JSON values only (str keys, no tuple, no NaN).
A model with anything else (a serializer of its own, a computed or excluded field, another
config, an annotation not listed) has no plan, and any value a plan doubts (a subclass, an int
in a float field, an infinity) gives up on the whole model: `to_json()` then. The omission
rules are `_omit_empty`'s: None is left out, and an empty list or dict held by a field not
typed Any, except the model's `_always` keys. tests/unit/types/test_types_convert_json.py
compares the text with `to_json()` over generated values of every wire type.
"""

from __future__ import annotations

import math
import threading
import types
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import AfterValidator, AwareDatetime, StringConstraints, WithJsonSchema
from pydantic.fields import FieldInfo
from pydantic_core import SchemaSerializer, core_schema

from riverbeam.types._base import _COMPACT_JSON, WireModel
from riverbeam.types._convert_build import _BASE_CONFIG, _HARMLESS_CONFIG

__all__ = ["to_json_text"]

Convert = Callable[[Any], Any]
# (field name, its converter, always written, may be None, the empty value left out: list for
# a list field, dict for an object field, None for the others: a free-form (Any) field keeps
# [] and {}, and any other field holding one is a doubt)
_Step = tuple[str, Convert, bool, bool, type[Any] | None]


class _Doubt(Exception):
    """A value the plan does not know JSON mode keeps: the model's to_json() decides."""


# Metadata that only validates (or documents) a value: the JSON of a valid value is unchanged.
_VALIDATING = (AfterValidator, StringConstraints, WithJsonSchema, Ge, Gt, Le, Lt, MinLen, MaxLen)
_DATETIME = SchemaSerializer(core_schema.datetime_schema())

_PLANS: dict[type[Any], tuple[_Step, ...] | None] = {}
_MAKING: set[type[Any]] = set()
_LOCK = threading.RLock()


def to_json_text(model: WireModel) -> str:
    """`model.to_json()`: the same text, from the attributes when the model's class has a plan."""
    cls = type(model)
    if cls in _PLANS:
        plan = _PLANS[cls]
    else:
        with _LOCK:
            plan = _plan(cls)
    if plan is not None:
        try:
            data = _dump(plan, model)
        except _Doubt:
            pass
        else:
            return _COMPACT_JSON.encode(data)
    return model.to_json()


def _dump(plan: tuple[_Step, ...], model: Any) -> dict[str, Any]:
    values = model.__dict__
    out: dict[str, Any] = {}
    for name, convert, always, nullable, empty in plan:
        held = values[name]
        if held is None:
            if not nullable:
                raise _Doubt  # None where the type has none: pydantic warns, or refuses
            if always:
                out[name] = None
            continue
        if not always and not held and type(held) is empty:
            continue  # an empty list or object, left out
        out[name] = convert(held)
    return out


# ---- plans ------------------------------------------------------------------------------------


def _plan(cls: type[Any]) -> tuple[_Step, ...] | None:
    """The steps of cls (made once; None: no plan). Called with _LOCK held."""
    if cls in _PLANS:
        return _PLANS[cls]
    if cls in _MAKING:
        return None  # a recursive model: left to to_json()
    _MAKING.add(cls)
    try:
        plan = _make_plan(cls)
    finally:
        _MAKING.discard(cls)
    _PLANS[cls] = plan
    return plan


def _make_plan(cls: type[Any]) -> tuple[_Step, ...] | None:
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
    always = cls._always
    steps: list[_Step] = []
    for name, info in cls.model_fields.items():
        convert = _field(info)
        if convert is None:
            return None
        steps.append((name, convert, name in always, *_shape(info.annotation)))
    return tuple(steps)


def _shape(annotation: Any) -> tuple[bool, type[Any] | None]:
    """Whether a field of annotation may hold None, and the empty container it leaves out."""
    if annotation is Any:
        return True, None
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType):
        arms = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(arms) < len(get_args(annotation))
        annotation = arms[0]  # one arm: _converter made sure
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    origin = get_origin(annotation)
    return nullable, origin if origin in (list, dict) else None


def _omit_empty_of(base: type[Any]) -> Any:
    return base.__pydantic_decorators__.model_serializers["_omit_empty"].func


def _field(info: FieldInfo) -> Convert | None:
    if info.exclude or info.serialization_alias is not None:
        return None
    if not all(isinstance(m, _VALIDATING) for m in info.metadata):
        return None
    return _converter(info.annotation)


def _converter(annotation: Any) -> Convert | None:
    """How JSON mode writes a (non-None) value of annotation, or None: no plan."""
    if get_origin(annotation) is Annotated:
        inner, *metadata = get_args(annotation)
        if not all(isinstance(m, _VALIDATING) for m in metadata):
            return None
        return _converter(inner)
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        arms = [a for a in get_args(annotation) if a is not type(None)]
        return _converter(arms[0]) if len(arms) == 1 else None
    if annotation is Any:
        return _json
    if annotation in _EXACT:
        return _EXACT[annotation]
    if annotation is datetime or annotation is AwareDatetime:
        return _datetime
    if origin is Literal:
        if all(type(a) is str for a in get_args(annotation)):
            return _str
        return None
    if origin is dict:
        key, value = get_args(annotation)
        return _json_object if key is str and value is Any else None
    if origin is list:
        (item,) = get_args(annotation)
        convert = _converter(item)
        if convert is None:
            return None
        return _listed(convert)
    if isinstance(annotation, type):
        plan = _plan(annotation)
        if plan is None:
            return None
        return _nested(annotation, plan)
    return None


# ---- converters: each raises _Doubt on a value it does not know --------------------------------


def _exactly(kind: type[Any]) -> Convert:
    def convert(value: Any) -> Any:
        if type(value) is not kind:
            raise _Doubt
        return value

    return convert


def _finite(value: Any) -> Any:
    if type(value) is not float or not math.isfinite(value):
        raise _Doubt  # an infinity is written as null, an int as an int: to_json() decides
    return value


_str = _exactly(str)
_EXACT: dict[Any, Convert] = {str: _str, int: _exactly(int), bool: _exactly(bool), float: _finite}


def _datetime(value: Any) -> Any:
    if type(value) is not datetime:
        raise _Doubt
    return _DATETIME.to_python(value, mode="json")


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


def _listed(convert: Convert) -> Convert:
    def listed(value: Any) -> Any:
        if type(value) is not list:
            raise _Doubt
        return [convert(item) for item in value]

    return listed


def _nested(cls: type[Any], plan: tuple[_Step, ...]) -> Convert:
    def nested(value: Any) -> Any:
        if type(value) is not cls:
            raise _Doubt
        return _dump(plan, value)

    return nested
