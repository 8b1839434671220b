"""WireModel -> protobuf message directly: the model's attributes copied field by field.

It yields the message json_format.ParseDict builds from the model's JSON dict (see _convert):
the same omit-empty rules (None and empty lists are not sent; an empty dict is not sent unless
the field is in _always or free-form Any), enum names through _proto_enums at the top level,
Timestamps from aware UTC datetimes to the microsecond, Struct and Value from JSON values.
Values of exactly the types validation leaves are copied; any other, and any failure, returns
None and the reference path decides (including the error it raises).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from google.protobuf.descriptor import FieldDescriptor
from pydantic.fields import FieldInfo

from riverbeam.types._convert import (
    Fallback,
    PlanCache,
    dumps_plainly,
    enums_are_enums,
    in_real_oneof,
    model_of,
)

if TYPE_CHECKING:
    from riverbeam.types._base import WireModel

__all__ = ["to_message"]

_FD = FieldDescriptor
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# json_format.ParseDict refuses values nested deeper than 100 messages (a Struct in a Value in a
# list counts each level); the direct path leaves anything close to that to it.
_DEPTH_LIMIT = 90

# What to do with a model attribute.
_STR, _INT, _BOOL, _FLOAT, _ENUM, _STRS = range(6)
_MSG, _MSGS, _STRUCT, _VALUE, _TIME, _NONE = range(6, 12)


class _Step(NamedTuple):
    name: str
    kind: int
    keep_empty: bool  # an empty list or dict is sent, not omitted (see WireModel._omit_empty)
    arg: Any  # the nested _Plan (_MSG, _MSGS) or (prefix, {name: number}) (_ENUM)


class _Plan(NamedTuple):
    cls: type[Any]
    steps: tuple[_Step, ...]


_PLANS: PlanCache[_Plan] = PlanCache()


def to_message(model: WireModel) -> Any | None:
    """The message of model built from its attributes, or None: the reference path decides."""
    cls = type(model)
    plan = _PLANS.top(cls, lambda: _plan(cls, cls.proto_type().DESCRIPTOR, top=True))
    if plan is None:
        return None
    msg = cls.proto_type()()
    try:
        _fill(msg, model, plan, 1)
    except Exception:  # any doubt: the json_format path gives the answer, or the error
        return None
    return msg


def _fill(msg: Any, model: Any, plan: _Plan, depth: int) -> None:
    """Set msg's fields from model's attributes; depth counts messages as ParseDict does."""
    values = model.__dict__
    for name, kind, keep_empty, arg in plan.steps:
        value = values[name]
        if value is None:
            continue  # omitted from the JSON dict
        if kind == _STR:
            if type(value) is not str:
                raise Fallback
            setattr(msg, name, value)
        elif kind == _MSG:
            if type(value) is not arg.cls:
                raise Fallback
            sub = getattr(msg, name)
            sub.SetInParent()  # present even if every field of it is a default
            _fill(sub, value, arg, depth + 1)
        elif kind == _MSGS:
            if type(value) is not list:
                raise Fallback
            repeated = getattr(msg, name)
            for item in value:
                if type(item) is not arg.cls:
                    raise Fallback
                _fill(repeated.add(), item, arg, depth + 1)
        elif kind == _BOOL:
            if type(value) is not bool:
                raise Fallback
            setattr(msg, name, value)
        elif kind == _TIME:
            # The JSON dict holds pydantic's RFC 3339 text of it, to the microsecond.
            if type(value) is not datetime or value.tzinfo is not UTC:
                raise Fallback
            delta = value - _EPOCH
            stamp = getattr(msg, name)
            stamp.seconds = delta.days * 86400 + delta.seconds  # sets presence, even for 0
            stamp.nanos = delta.microseconds * 1000
        elif kind == _STRUCT:
            if type(value) is not dict:
                raise Fallback
            if value:
                _fill_struct(getattr(msg, name), value, depth + 1)
            elif keep_empty:
                getattr(msg, name).SetInParent()
        elif kind == _VALUE:
            if not keep_empty and isinstance(value, list | dict) and not value:
                continue
            _fill_value(getattr(msg, name), value, depth + 1)
        elif kind == _INT:
            if type(value) is not int:
                raise Fallback
            setattr(msg, name, value)  # outside int32: ValueError, and the reference decides
        elif kind == _STRS:
            if type(value) is not list:
                raise Fallback
            for item in value:
                if type(item) is not str:
                    raise Fallback
            getattr(msg, name).extend(value)
        elif kind == _FLOAT:
            if type(value) is not float or value - value != 0.0:  # NaN, infinities: null in JSON
                raise Fallback
            setattr(msg, name, value)
        elif kind == _ENUM:
            prefix, numbers = arg
            if type(value) is not str:
                raise Fallback
            setattr(msg, name, numbers[prefix + value.upper()])  # KeyError: the reference decides
        else:
            raise Fallback


def _fill_struct(struct: Any, data: dict[Any, Any], depth: int) -> None:
    if depth > _DEPTH_LIMIT:
        raise Fallback
    fields = struct.fields
    for key, value in data.items():
        if type(key) is not str:
            raise Fallback
        _fill_value(fields[key], value, depth + 1)


def _fill_value(target: Any, value: Any, depth: int) -> None:
    """Set a google.protobuf.Value as ParseDict does from the JSON dump of value."""
    if depth > _DEPTH_LIMIT:
        raise Fallback
    kind = type(value)
    if kind is str:
        target.string_value = value
    elif kind is dict:
        if value:
            _fill_struct(target.struct_value, value, depth + 1)
        else:
            target.struct_value.SetInParent()
    elif kind is bool:
        target.bool_value = value
    elif kind is int:
        target.number_value = value
    elif kind is float:
        if value - value != 0.0:  # NaN and infinities dump as null
            raise Fallback
        target.number_value = value
    elif value is None:
        target.null_value = 0
    elif kind is list:
        if value:
            items = target.list_value.values
            for item in value:
                _fill_value(items.add(), item, depth + 2)
        else:
            target.list_value.SetInParent()
    else:
        raise Fallback  # a tuple, a set, a datetime...: the JSON dump converts it


def _plan(cls: type[Any], descriptor: Any, *, top: bool) -> _Plan | None:
    """The steps that copy cls's attributes into a message of descriptor, or None."""
    if not dumps_plainly(cls) or (top and not enums_are_enums(cls, descriptor)):
        return None
    always: frozenset[str] = cls._always
    enums: Mapping[str, str] = cls._proto_enums if top else {}
    steps: list[_Step] = []
    for name, info in cls.model_fields.items():
        field = descriptor.fields_by_name.get(name)
        kind, arg = _NONE, None
        if field is not None and not in_real_oneof(field):
            kind, arg = _kind(field, info, enums.get(name))
        if kind == _VALUE and name in always:
            return None  # None would be sent, as a null Value
        steps.append(_Step(name, kind, name in always or info.annotation is Any, arg))
    return _Plan(cls, tuple(steps))


def _kind(field: Any, info: FieldInfo, enum_prefix: str | None) -> tuple[int, Any]:
    if field.type == _FD.TYPE_MESSAGE:
        message_type = field.message_type
        full_name = message_type.full_name
        if full_name.startswith("google.protobuf.") or message_type.GetOptions().map_entry:
            if field.is_repeated:
                return _NONE, None
            wkt = {
                "google.protobuf.Struct": _STRUCT,
                "google.protobuf.Value": _VALUE,
                "google.protobuf.Timestamp": _TIME,
            }
            return wkt.get(full_name, _NONE), None
        nested = _nested(model_of(info.annotation, many=field.is_repeated), message_type)
        if nested is None:
            return _NONE, None
        return (_MSGS if field.is_repeated else _MSG), nested
    if field.is_repeated:
        return (_STRS if field.type == _FD.TYPE_STRING else _NONE), None
    if field.type == _FD.TYPE_ENUM:
        if enum_prefix is None:
            return _NONE, None  # the JSON dict would carry the model's value as the enum's name
        return _ENUM, (enum_prefix, {value.name: value.number for value in field.enum_type.values})
    scalars = {
        _FD.TYPE_STRING: _STR,
        _FD.TYPE_INT32: _INT,
        _FD.TYPE_BOOL: _BOOL,
        _FD.TYPE_DOUBLE: _FLOAT,
    }
    return scalars.get(field.type, _NONE), None


def _nested(model: type[Any] | None, descriptor: Any) -> _Plan | None:
    if model is None:
        return None
    # None for a recursive message type: left to the reference path.
    return _PLANS.nested((model, descriptor), lambda: _plan(model, descriptor, top=False))
