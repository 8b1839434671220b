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

import keyword
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message as ProtoMessage
from pydantic.fields import FieldInfo

from riverbeam.types._convert import (
    EXACT,
    UNBUILT,
    Fallback,
    JsonObject,
    PlanCache,
    enums_are_enums,
    generated,
    in_real_oneof,
    indented,
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
    read: Callable[[Any], JsonObject]  # the steps as one function (_compiled)


_PLANS: PlanCache[_Plan] = PlanCache()


def to_dict(cls: type[WireModel], msg: ProtoMessage) -> JsonObject | None:
    """The dict cls validates, read from msg's fields, or None: the reference path decides."""
    descriptor = getattr(msg, "DESCRIPTOR", None)
    if descriptor is None:
        return None  # not a message: the reference path says so its own way
    key = (cls, descriptor)
    plan = _PLANS.made.get(key, UNBUILT)
    if plan is UNBUILT:
        plan = _PLANS.top(key, lambda: _plan(descriptor, cls, top=True))
    if plan is None:
        return None
    try:
        data: JsonObject = plan.read(msg)
    except Exception:  # any doubt: the json_format path gives the answer, or the error
        return None
    return data


# Each plan's steps become one generated function, as _convert_to's do: each field read with a
# getattr (a HasField only where presence is in doubt), repeated ones over their slice (a upb
# container's iterator raises and swallows an IndexError at its end), the printed defaults of
# fields without presence added after the set fields, as MessageToDict orders them.


def _compiled(steps: tuple[_Step, ...]) -> Callable[[Any], JsonObject]:
    """The function that reads a message into its dict as the steps say (raises on doubt)."""
    env: dict[str, Any] = {
        "_POP": _POP,
        "_STAMPS": _STAMPS,  # emptied in place, never replaced
        "_time": _time,
        "_struct": _struct,
        "_value": _value,
        "_double": _double,
        "_copysign": math.copysign,
    }
    lines = ["def read(msg):", "    out = {}"]
    late: list[str] = []
    for i, step in enumerate(steps):
        now, then = _step_code(i, step, env)
        lines += [f"    {line}" for line in now]
        late += [f"    {line}" for line in then]
    lines += [*late, "    return out"]
    read: Callable[[Any], JsonObject] = generated(lines, env)
    return read


def _step_code(i: int, step: _Step, env: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The lines reading one field in its turn, and those adding its printed default after."""
    name, kind, arg, drop = step
    plain = name.isidentifier() and not keyword.iskeyword(name)
    get = f"msg.{name}" if plain else f"getattr(msg, {name!r})"
    key, v = repr(name), f"v{i}"
    put = f"out[{key}] = {v}"
    kept = [f"if {v}:", f"    {put}"] if drop else [put]  # a falsy value the model lacks: out
    if kind == _STR:
        return [f"{v} = {get}", f"if {v}:", f"    {put}"], []  # "" is proto3's unset
    if kind in (_OPT, _OPT_DOUBLE):
        value = v if kind == _OPT else f"_double({v})"
        put = f"out[{key}] = {value}"
        # A set value is truthy but for "", 0 and -0.0: only then is presence asked; a falsy
        # one the model lacks is left out anyway.
        test = v if drop else f"{v} or msg.HasField({key})"
        return [f"{v} = {get}", f"if {test}:", f"    {put}"], []
    if kind in (_MSG, _TIME, _STRUCT, _VALUE):
        if kind == _MSG:
            env[f"_read{i}"] = arg.read
            value = f"_read{i}({get})"
        elif kind == _TIME:
            value = f"_time({get}, {bool(arg)})"
            if arg:  # a datetime made of the same instant before is shared (see _time)
                value = f"_STAMPS.get(({v}.seconds, {v}.nanos)) or _time({v}, True)"
                return [
                    f"if msg.HasField({key}):",
                    f"    {v} = {get}",
                    f"    out[{key}] = {value}",
                ], []
        else:
            value = f"{'_struct' if kind == _STRUCT else '_value'}({get})"
        return [f"if msg.HasField({key}):", f"    {v} = {value}", *indented(kept)], []
    if kind in (_BOOL, _INT, _STRS, _MSGS):
        first = f"{v} = {get}[:]" if kind in (_STRS, _MSGS) else f"{v} = {get}"
        if kind == _MSGS:
            env[f"_read{i}"] = arg.read
            now = [
                f"if {v}:",
                f"    items = {v}",
                f"    {v} = []",
                "    for item in items:",
                f"        {v}.append(_read{i}(item))",
                f"    {put}",
            ]
        else:
            now = [f"if {v}:", f"    {put}"]
        return [first, *now], ([] if drop else [f"if not {v}:", f"    {put}"])
    if kind == _ENUM:
        # Printed as its name (never empty) or, unknown, its number (never 0): never left out
        # as a falsy default. arg maps the number to the name, or to the model's value.
        env[f"_labels{i}"] = arg
        unset = arg.get(0, 0)
        now = [
            f"n{i} = {get}",
            f"if n{i}:",
            f"    {v} = _labels{i}.get(n{i}, n{i})",
            f"    if {v} is not _POP:",
            f"        {put}",
        ]
        if unset is _POP:
            return now, []
        env[f"_unset{i}"] = unset
        return now, [f"if not n{i}:", f"    out[{key}] = _unset{i}"]
    # _DOUBLE: -0.0 counts as set
    late = f"z{i}"
    now = [
        f"{v} = {get}",
        f"{late} = {v} == 0.0 and _copysign(1.0, {v}) > 0",
        f"if not {late}:",
        f"    {v} = _double({v})",
        *indented(kept),
    ]
    return now, ([] if drop else [f"if {late}:", f"    out[{key}] = 0"])


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
    made = tuple(steps)
    return _Plan(made, _compiled(made))


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
