"""protobuf message -> the dict a WireModel validates, read straight from the fields.

It yields the dict the reference path (see _convert) makes with json_format.MessageToDict and
its fix-ups: the same keys, values and order. Fields without presence are all there (printed
defaults after the set fields, as MessageToDict orders them) except "" strings, which proto3
cannot tell from absent; Struct and Value numbers come back as int when integral below 2**53;
doubles too, and NaN and infinities as their JSON names; enum names through the model's
_proto_enums at the top level (..._UNSPECIFIED: absent); unset fields the model lacks are left
out. Timestamps are the RFC 3339 text json_format prints, or, for a UtcDatetime field and a
whole microsecond, the datetime that text validates to. The caller validates the dict: hostile
input meets the same checks. Where it cannot vouch for the result it returns None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message as ProtoMessage
from pydantic.fields import FieldInfo

from riverbeam.types._convert import (
    EXACT,
    Fallback,
    JsonObject,
    PlanCache,
    enums_are_enums,
    in_real_oneof,
    is_utc_datetime,
    model_of,
)

if TYPE_CHECKING:
    from riverbeam.types._base import WireModel

__all__ = ["to_dict"]

_FD = FieldDescriptor
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECONDS_MIN, _SECONDS_MAX = -62135596800, 253402300799  # Timestamp's range: years 1 to 9999

# How to read a field. Those without presence print their default after the set fields.
_STR, _OPT, _MSG, _MSGS, _STRUCT, _VALUE = range(6)
_TIME, _STRS, _BOOL, _INT, _DOUBLE, _OPT_DOUBLE, _ENUM = range(6, 13)
_POP: Any = object()  # an enum value the model reads as absent (..._UNSPECIFIED)


class _Step(NamedTuple):
    name: str
    kind: int
    arg: Any  # nested _Plan, {number: value} of an enum, or whether a Timestamp is a datetime
    drop_falsy: bool  # not a field of the model: left out when falsy (a printed default)


class _Plan(NamedTuple):
    steps: tuple[_Step, ...]


_PLANS: PlanCache[_Plan] = PlanCache()


def to_dict(cls: type[WireModel], msg: ProtoMessage) -> JsonObject | None:
    """The dict cls validates, read from msg's fields, or None: the reference path decides."""
    descriptor = getattr(msg, "DESCRIPTOR", None)
    if descriptor is None:
        return None  # not a message: the reference path says so its own way
    plan = _PLANS.top((cls, descriptor), lambda: _plan(descriptor, cls, top=True))
    if plan is None:
        return None
    try:
        return _read(msg, plan)
    except Exception:  # any doubt: the json_format path gives the answer, or the error
        return None


def _read(msg: Any, plan: _Plan) -> JsonObject:
    out: JsonObject = {}
    late: list[tuple[str, Any, bool]] = []  # defaults, printed after the set fields
    for name, kind, arg, drop_falsy in plan.steps:
        if kind == _STR:
            value = getattr(msg, name)
            if not value:
                continue  # "" is proto3's unset
        elif kind == _OPT:
            if not msg.HasField(name):
                continue
            value = getattr(msg, name)
        elif kind == _MSG:
            if not msg.HasField(name):
                continue
            value = _read(getattr(msg, name), arg)
        elif kind == _MSGS:
            items = getattr(msg, name)
            if not items:
                late.append((name, [], drop_falsy))
                continue
            value = [_read(item, arg) for item in items]
        elif kind == _TIME:
            if not msg.HasField(name):
                continue
            value = _time(getattr(msg, name), arg)
        elif kind == _STRUCT:
            if not msg.HasField(name):
                continue
            value = _struct(getattr(msg, name))
        elif kind == _VALUE:
            if not msg.HasField(name):
                continue
            value = _value(getattr(msg, name))
        elif kind == _BOOL or kind == _INT:
            value = getattr(msg, name)
            if not value:
                late.append((name, value, drop_falsy))
                continue
        elif kind == _STRS:
            value = list(getattr(msg, name))
            if not value:
                late.append((name, value, drop_falsy))
                continue
        elif kind == _ENUM:
            # Printed as its name (never empty) or, unknown, its number (never 0): never left
            # out as a falsy default. arg maps the number to the name, or to the model's value.
            number = getattr(msg, name)
            value = arg.get(number, number)
            if not number:
                late.append((name, value, False))
            elif value is not _POP:
                out[name] = value
            continue
        elif kind == _DOUBLE:
            number = getattr(msg, name)
            value = _double(number)
            if number == 0.0 and math.copysign(1.0, number) > 0:  # -0.0 counts as set
                late.append((name, value, drop_falsy))
                continue
        else:  # _OPT_DOUBLE
            if not msg.HasField(name):
                continue
            value = _double(getattr(msg, name))
        if drop_falsy and not value:
            continue
        out[name] = value
    for name, value, drop_falsy in late:
        if not (drop_falsy and not value) and value is not _POP:
            out[name] = value
    return out


def _double(number: float) -> Any:
    if number - number != 0.0:
        return "NaN" if number != number else ("Infinity" if number > 0 else "-Infinity")
    if number.is_integer() and abs(number) < EXACT:
        return int(number)
    return number


# Datetimes made of Timestamps, by (seconds, nanos): a record carries the same instant several
# times (a new session's created_at, last_active_at, its run's started_at, ...), and a datetime
# is immutable, so one is shared. Bounded: emptied when full.
_STAMPS: dict[tuple[int, int], datetime] = {}
_STAMPS_MAX = 1024


def _time(stamp: Any, as_datetime: bool) -> Any:
    seconds, nanos = stamp.seconds, stamp.nanos
    if not (_SECONDS_MIN <= seconds <= _SECONDS_MAX and 0 <= nanos < 1_000_000_000):
        raise Fallback  # json_format raises on it: let it
    if as_datetime and not nanos % 1000:
        key = (seconds, nanos)
        found = _STAMPS.get(key)
        if found is None:
            if len(_STAMPS) >= _STAMPS_MAX:
                _STAMPS.clear()
            found = _STAMPS[key] = _EPOCH + timedelta(0, seconds, nanos // 1000)
        return found
    return stamp.ToJsonString()  # the text validation read before, to the nanosecond


def _struct(struct: Any) -> JsonObject:
    fields = struct.fields
    return {key: _value(fields[key]) for key in fields}


def _value(value: Any) -> Any:
    """A google.protobuf.Value as MessageToDict gives it, integral numbers as int."""
    which = value.WhichOneof("kind")
    if which == "string_value":
        return value.string_value
    if which == "number_value":
        number = value.number_value
        if number - number != 0.0:
            raise Fallback  # json_format raises on NaN and infinities: let it
        return int(number) if number.is_integer() and abs(number) < EXACT else number
    if which == "struct_value":
        return _struct(value.struct_value)
    if which == "bool_value":
        return value.bool_value
    if which == "list_value":
        return [_value(item) for item in value.list_value.values]
    return None  # null_value, or no kind set


def _plan(descriptor: Any, cls: type[Any] | None, *, top: bool) -> _Plan | None:
    """How to read a message of descriptor into the dict cls validates, or None."""
    fields = list(descriptor.fields)
    if [f.number for f in fields] != sorted(f.number for f in fields):
        return None  # MessageToDict's order (by number, then defaults as declared) would differ
    if top and cls is not None and not enums_are_enums(cls, descriptor):
        return None
    model_fields: dict[str, FieldInfo] = cls.model_fields if cls is not None else {}
    enums: Mapping[str, str] = cls._proto_enums if top and cls is not None else {}
    steps: list[_Step] = []
    for field in fields:
        info = model_fields.get(field.name)
        step = None if in_real_oneof(field) else _kind(field, info, enums.get(field.name))
        if step is None:
            return None
        steps.append(_Step(field.name, step[0], step[1], top and info is None))
    return _Plan(tuple(steps))


def _kind(field: Any, info: FieldInfo | None, enum_prefix: str | None) -> tuple[int, Any] | None:
    if field.type == _FD.TYPE_MESSAGE:
        message_type = field.message_type
        full_name = message_type.full_name
        if full_name.startswith("google.protobuf.") or message_type.GetOptions().map_entry:
            if field.is_repeated:
                return None
            if full_name == "google.protobuf.Timestamp":
                return _TIME, is_utc_datetime(info)
            wkt = {"google.protobuf.Struct": _STRUCT, "google.protobuf.Value": _VALUE}
            return (wkt[full_name], None) if full_name in wkt else None
        annotation = info.annotation if info is not None else None
        nested = _nested(message_type, model_of(annotation, many=field.is_repeated))
        if nested is None:
            return None
        return (_MSGS if field.is_repeated else _MSG), nested
    if field.is_repeated:
        return (_STRS, None) if field.type == _FD.TYPE_STRING else None
    if field.type == _FD.TYPE_ENUM:
        enum = field.enum_type
        if enum.is_closed or field.has_presence or enum.full_name == "google.protobuf.NullValue":
            return None
        return _ENUM, _enum_values(enum, enum_prefix)
    if field.type == _FD.TYPE_DOUBLE:
        return (_OPT_DOUBLE if field.has_presence else _DOUBLE), None
    if field.type not in (_FD.TYPE_STRING, _FD.TYPE_BOOL, _FD.TYPE_INT32):
        return None
    if field.has_presence:
        return _OPT, None
    return {_FD.TYPE_STRING: _STR, _FD.TYPE_BOOL: _BOOL, _FD.TYPE_INT32: _INT}[field.type], None


def _enum_values(enum: Any, prefix: str | None) -> dict[int, Any]:
    """number -> what the dict holds: the value's name, or what the model's prefix makes of it."""
    out: dict[int, Any] = {}
    for number, value in enum.values_by_number.items():  # the name MessageToDict prints
        label: Any = value.name
        if prefix is not None:
            if label == prefix + "UNSPECIFIED":
                label = _POP
            elif label.startswith(prefix):
                label = label[len(prefix) :].lower()
        out[number] = label
    return out


def _nested(descriptor: Any, model: type[Any] | None) -> _Plan | None:
    # None for a recursive message type: left to the reference path.
    return _PLANS.nested((model, descriptor), lambda: _plan(descriptor, model, top=False))
