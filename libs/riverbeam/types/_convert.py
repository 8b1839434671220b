"""WireModel <-> protobuf message, field by field, and the json_format path it must equal.

The reference is the json_format path: model -> JSON dict -> json_format.ParseDict, and back
json_format.MessageToDict -> fix-ups -> validation. What it yields is the contract; it stays
here, private, and the differential tests compare the two paths on generated values.

The direct path follows a plan made once per (model class, message descriptor): to protobuf it
copies the model's attributes into the message; from protobuf it builds the very dict the
reference path would validate (same keys, same values, same order), straight from the message
fields. It handles the field kinds the wire types use (string, bool, int32, double, enum,
repeated string, nested and repeated messages, Struct, Value, Timestamp) and values of exactly
the types validation leaves in a model. For anything else (a kind of field with no step here, a
value of another type, a value json_format would refuse or transform, a failure of any sort) it
gives up and the reference path runs, so correctness never depends on the direct path.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple, Union, get_args, get_origin

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message as ProtoMessage
from pydantic.fields import FieldInfo

from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:
    from riverbeam.types._base import WireModel

__all__ = ["proto_dict", "to_proto"]

JsonObject = dict[str, Any]

_FD = FieldDescriptor
_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_TIMESTAMP = "google.protobuf.Timestamp"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECONDS_MIN, _SECONDS_MAX = -62135596800, 253402300799  # Timestamp's range: years 1-9999
_EXACT = 2**53  # a double holds every integer below this exactly
# json_format.ParseDict refuses values nested deeper than 100 messages (a Struct in a Value in a
# list counts each level). The direct path leaves anything close to that to it.
_DEPTH_LIMIT = 90


class _Fallback(Exception):  # a signal, not an error
    """The direct path cannot vouch for this value: the json_format path decides."""


# ---- the reference: json_format ---------------------------------------------------------------


def _ints_back(value: Any) -> Any:
    """google.protobuf.Struct stores every number as a double; give integral ones back as int."""
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT:
        return int(value)
    if isinstance(value, dict):
        return {k: _ints_back(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints_back(v) for v in value]
    return value


def _drop_unset_strings(descriptor: Any, data: JsonObject) -> None:
    """Remove "" of string fields without presence (proto3's unset), through nested messages.

    descriptor is a google.protobuf Descriptor (typed Any: the stubs lag the runtime).
    """
    for field in descriptor.fields:
        value = data.get(field.name)
        if value is None:
            continue
        if field.type == _FD.TYPE_STRING:
            if value == "" and not field.has_presence and not field.is_repeated:
                del data[field.name]
        elif field.type == _FD.TYPE_MESSAGE:
            nested = field.message_type
            if nested.full_name.startswith("google.protobuf."):
                continue  # Struct, Value, Timestamp: free-form or scalar in JSON
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, dict):
                    _drop_unset_strings(nested, item)


def _to_proto_json(model: WireModel) -> Any:
    """The message of model through its JSON dict and json_format.ParseDict (the reference)."""
    msg = model.proto_type()()
    try:
        json_format.ParseDict(model._enums_to_proto(model.to_json_dict()), msg)
    except json_format.ParseError as exc:
        raise RiverbeamError(ErrorCode.INVALID_DOCUMENT, f"{type(model).__name__}: {exc}") from exc
    return msg


def _proto_dict_json(cls: type[WireModel], msg: ProtoMessage) -> JsonObject:
    """The dict from_proto validates, through json_format.MessageToDict (the reference)."""
    data: JsonObject = json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    data = _ints_back(data)
    _drop_unset_strings(msg.DESCRIPTOR, data)
    # Printed defaults of fields this model does not have (InvokePayload has no actions).
    for key in [k for k in data if k not in cls.model_fields and not data[k]]:
        del data[key]
    return cls._enums_from_proto(data)


# ---- entry points -----------------------------------------------------------------------------


def to_proto(model: WireModel) -> Any:
    """The message of model: directly when the plan vouches for every value, else as before."""
    msg = _to_proto_direct(model)
    return _to_proto_json(model) if msg is None else msg


def proto_dict(cls: type[WireModel], msg: ProtoMessage) -> JsonObject:
    """The dict from_proto validates: built directly when the plan covers the message."""
    data = _proto_dict_direct(cls, msg)
    return _proto_dict_json(cls, msg) if data is None else data


def _to_proto_direct(model: WireModel) -> Any | None:
    """The message of model built from its attributes, or None if the reference must decide."""
    cls = type(model)
    plan = _TO_TOP.get(cls, _UNBUILT)
    if plan is _UNBUILT:
        plan = _TO_TOP[cls] = _to_plan(cls, cls.proto_type().DESCRIPTOR, top=True)
    if plan is None:
        return None
    msg = cls.proto_type()()
    try:
        _fill(msg, model, plan, 1)
    except Exception:  # any doubt: the json_format path gives the answer, or the error
        return None
    return msg


def _proto_dict_direct(cls: type[WireModel], msg: ProtoMessage) -> JsonObject | None:
    """The dict from_proto validates, read from the fields, or None if the reference must."""
    key = (cls, msg.DESCRIPTOR)
    plan = _READ_TOP.get(key, _UNBUILT)
    if plan is _UNBUILT:
        plan = _READ_TOP[key] = _read_plan(msg.DESCRIPTOR, cls, top=True)
    if plan is None:
        return None
    try:
        return _read(msg, plan)
    except Exception:  # any doubt: the json_format path gives the answer, or the error
        return None


# ---- model -> message -------------------------------------------------------------------------

# What to do with a model attribute.
_T_STR, _T_INT, _T_BOOL, _T_FLOAT, _T_ENUM, _T_STRS = range(6)
_T_MSG, _T_MSGS, _T_STRUCT, _T_VALUE, _T_TIME, _T_NONE = range(6, 12)


class _To(NamedTuple):
    name: str
    kind: int
    keep_empty: bool  # an empty list or dict is sent, not omitted (see WireModel._omit_empty)
    arg: Any  # the nested plan (_T_MSG, _T_MSGS) or (prefix, values_by_name) (_T_ENUM)


class _ToPlan(NamedTuple):
    cls: type[Any]
    fields: tuple[_To, ...]


_UNBUILT: Any = object()
_TO_TOP: dict[type[Any], _ToPlan | None] = {}
_TO_NESTED: dict[tuple[type[Any], Any], _ToPlan | None] = {}
_READ_TOP: dict[tuple[type[Any], Any], _ReadPlan | None] = {}
_READ_NESTED: dict[tuple[type[Any] | None, Any], _ReadPlan | None] = {}
_BUILDING: set[tuple[Any, ...]] = set()


def _fill(msg: Any, model: Any, plan: _ToPlan, depth: int) -> None:
    """Set msg's fields from model's attributes; depth counts messages as ParseDict does."""
    values = model.__dict__
    for name, kind, keep_empty, arg in plan.fields:
        value = values[name]
        if value is None:
            continue  # omitted from the JSON dict
        if kind == _T_STR:
            if type(value) is not str:
                raise _Fallback
            setattr(msg, name, value)
        elif kind == _T_MSG:
            if type(value) is not arg.cls:
                raise _Fallback
            sub = getattr(msg, name)
            sub.SetInParent()
            _fill(sub, value, arg, depth + 1)
        elif kind == _T_MSGS:
            if type(value) is not list:
                raise _Fallback
            repeated = getattr(msg, name)
            for item in value:
                if type(item) is not arg.cls:
                    raise _Fallback
                _fill(repeated.add(), item, arg, depth + 1)
        elif kind == _T_BOOL:
            if type(value) is not bool:
                raise _Fallback
            setattr(msg, name, value)
        elif kind == _T_TIME:
            if type(value) is not datetime or value.tzinfo is not UTC:
                raise _Fallback
            delta = value - _EPOCH
            stamp = getattr(msg, name)
            stamp.seconds = delta.days * 86400 + delta.seconds
            stamp.nanos = delta.microseconds * 1000
        elif kind == _T_STRUCT:
            if type(value) is not dict:
                raise _Fallback
            if value:
                _fill_struct(getattr(msg, name), value, depth + 1)
            elif keep_empty:
                getattr(msg, name).SetInParent()
        elif kind == _T_VALUE:
            if not keep_empty and isinstance(value, list | dict) and not value:
                continue
            _fill_value(getattr(msg, name), value, depth + 1)
        elif kind == _T_INT:
            if type(value) is not int:
                raise _Fallback
            setattr(msg, name, value)  # out of the int32 range: ValueError, the reference decides
        elif kind == _T_STRS:
            if type(value) is not list:
                raise _Fallback
            for item in value:
                if type(item) is not str:
                    raise _Fallback
            getattr(msg, name).extend(value)
        elif kind == _T_FLOAT:
            if type(value) is not float or value - value != 0.0:  # NaN and infinities dump as null
                raise _Fallback
            setattr(msg, name, value)
        elif kind == _T_ENUM:
            prefix, numbers = arg
            if type(value) is not str:
                raise _Fallback
            setattr(msg, name, numbers[prefix + value.upper()])  # KeyError: the reference decides
        else:
            raise _Fallback


def _fill_struct(struct: Any, data: dict[Any, Any], depth: int) -> None:
    if depth > _DEPTH_LIMIT:
        raise _Fallback
    fields = struct.fields
    for key, value in data.items():
        if type(key) is not str:
            raise _Fallback
        _fill_value(fields[key], value, depth + 1)


def _fill_value(target: Any, value: Any, depth: int) -> None:
    """Set a google.protobuf.Value as ParseDict does from the JSON form of value."""
    if depth > _DEPTH_LIMIT:
        raise _Fallback
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
            raise _Fallback
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
        raise _Fallback  # tuples, sets, datetimes...: the JSON dump converts them


def _to_plan(cls: type[Any], descriptor: Any, *, top: bool) -> _ToPlan | None:
    """The steps that copy cls's attributes into a message of descriptor, or None."""
    if not _dumps_plainly(cls):
        return None
    always: frozenset[str] = cls._always
    enums: Mapping[str, str] = cls._proto_enums if top else {}
    steps: list[_To] = []
    for name, info in cls.model_fields.items():
        field = descriptor.fields_by_name.get(name)
        kind, arg = _T_NONE, None
        if field is not None and not _in_real_oneof(field):
            kind, arg = _to_kind(field, info, enums.get(name))
        keep_empty = name in always or info.annotation is Any
        if kind == _T_VALUE and name in always:
            return None  # None would be sent as a null Value
        steps.append(_To(name, kind, keep_empty, arg))
    return _ToPlan(cls, tuple(steps))


def _to_kind(field: Any, info: FieldInfo, enum_prefix: str | None) -> tuple[int, Any]:
    if field.type == _FD.TYPE_MESSAGE:
        full_name = field.message_type.full_name
        if field.is_repeated:
            if full_name.startswith("google.protobuf.") or field.message_type.GetOptions().map_entry:
                return _T_NONE, None
            nested = _nested_to_plan(_model_of(info.annotation, many=True), field.message_type)
            return (_T_NONE, None) if nested is None else (_T_MSGS, nested)
        if full_name == _STRUCT:
            return _T_STRUCT, None
        if full_name == _VALUE:
            return _T_VALUE, None
        if full_name == _TIMESTAMP:
            return _T_TIME, None
        if full_name.startswith("google.protobuf."):
            return _T_NONE, None
        nested = _nested_to_plan(_model_of(info.annotation, many=False), field.message_type)
        return (_T_NONE, None) if nested is None else (_T_MSG, nested)
    if field.is_repeated:
        return (_T_STRS, None) if field.type == _FD.TYPE_STRING else (_T_NONE, None)
    if field.type == _FD.TYPE_ENUM:
        if enum_prefix is None:
            return _T_NONE, None  # the JSON dict would carry the model's value as the name
        numbers = {value.name: value.number for value in field.enum_type.values}
        return _T_ENUM, (enum_prefix, numbers)
    scalar = {
        _FD.TYPE_STRING: _T_STR,
        _FD.TYPE_INT32: _T_INT,
        _FD.TYPE_BOOL: _T_BOOL,
        _FD.TYPE_DOUBLE: _T_FLOAT,
    }
    return scalar.get(field.type, _T_NONE), None


def _nested_to_plan(model: type[Any] | None, descriptor: Any) -> _ToPlan | None:
    if model is None:
        return None
    key = (model, descriptor)
    if key in _TO_NESTED:
        return _TO_NESTED[key]
    if key in _BUILDING:
        return None  # a recursive message type: left to the reference path
    _BUILDING.add(key)
    try:
        plan = _TO_NESTED[key] = _to_plan(model, descriptor, top=False)
    finally:
        _BUILDING.discard(key)
    return plan


# ---- message -> dict to validate --------------------------------------------------------------

# How to read a field. "Late" kinds have no presence: MessageToDict prints their default after
# the set fields (ListFields order), so a default value is added after them, as it does.
_R_STR, _R_OPT, _R_MSG, _R_MSGS, _R_STRUCT, _R_VALUE = range(6)
_R_TIME, _R_STRS, _R_BOOL, _R_INT, _R_DOUBLE, _R_OPT_DOUBLE, _R_ENUM = range(6, 13)
_POP: Any = object()  # an enum value the model reads as absent (..._UNSPECIFIED)


class _Read(NamedTuple):
    name: str
    kind: int
    arg: Any  # nested plan, {number: value} of an enum, or whether a Timestamp is a datetime
    drop_falsy: bool  # not a field of the model: dropped when falsy (a printed default)


class _ReadPlan(NamedTuple):
    fields: tuple[_Read, ...]


def _read(msg: Any, plan: _ReadPlan) -> JsonObject:
    out: JsonObject = {}
    late: list[tuple[str, Any, bool]] = []
    for name, kind, arg, drop_falsy in plan.fields:
        if kind == _R_STR:
            value = getattr(msg, name)
            if not value:
                continue  # "" is proto3's unset
        elif kind == _R_OPT:
            if not msg.HasField(name):
                continue
            value = getattr(msg, name)
        elif kind == _R_MSG:
            if not msg.HasField(name):
                continue
            value = _read(getattr(msg, name), arg)
        elif kind == _R_MSGS:
            items = getattr(msg, name)
            if not items:
                late.append((name, [], drop_falsy))
                continue
            value = [_read(item, arg) for item in items]
        elif kind == _R_TIME:
            if not msg.HasField(name):
                continue
            value = _time(getattr(msg, name), arg)
        elif kind == _R_STRUCT:
            if not msg.HasField(name):
                continue
            value = _struct(getattr(msg, name))
        elif kind == _R_VALUE:
            if not msg.HasField(name):
                continue
            value = _value(getattr(msg, name))
        elif kind == _R_BOOL or kind == _R_INT:
            value = getattr(msg, name)
            if not value:
                late.append((name, value, drop_falsy))
                continue
        elif kind == _R_STRS:
            value = list(getattr(msg, name))
            if not value:
                late.append((name, value, drop_falsy))
                continue
        elif kind == _R_ENUM:
            # Printed as its name (never empty) or, unknown, its number (never 0): never
            # dropped as a falsy default; then the model's prefix is handled (arg's values).
            number = getattr(msg, name)
            value = arg.get(number, number)
            if not number:
                late.append((name, value, False))
            elif value is not _POP:
                out[name] = value
            continue
        elif kind == _R_DOUBLE:
            number = getattr(msg, name)
            value = _double(number)
            if number == 0.0 and math.copysign(1.0, number) > 0:  # -0.0 is a set value
                late.append((name, value, drop_falsy))
                continue
        else:  # _R_OPT_DOUBLE
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
    if number.is_integer() and abs(number) < _EXACT:
        return int(number)
    return number


def _time(stamp: Any, as_datetime: bool) -> Any:
    seconds, nanos = stamp.seconds, stamp.nanos
    if not (_SECONDS_MIN <= seconds <= _SECONDS_MAX and 0 <= nanos < 1_000_000_000):
        raise _Fallback  # json_format raises on it; let it
    if as_datetime and not nanos % 1000:
        return _EPOCH + timedelta(0, seconds, nanos // 1000)
    return stamp.ToJsonString()  # the text validation used to read, to the nanosecond


def _struct(struct: Any) -> JsonObject:
    fields = struct.fields
    return {key: _value(fields[key]) for key in fields}


def _value(value: Any) -> Any:
    """A google.protobuf.Value as MessageToDict + _ints_back give it."""
    which = value.WhichOneof("kind")
    if which == "string_value":
        return value.string_value
    if which == "number_value":
        number = value.number_value
        if number - number != 0.0:
            raise _Fallback  # json_format raises on NaN and infinities; let it
        return int(number) if number.is_integer() and abs(number) < _EXACT else number
    if which == "struct_value":
        return _struct(value.struct_value)
    if which == "bool_value":
        return value.bool_value
    if which == "list_value":
        return [_value(item) for item in value.list_value.values]
    return None


def _read_plan(descriptor: Any, cls: type[Any] | None, *, top: bool) -> _ReadPlan | None:
    """How to read a message of descriptor into the dict cls validates, or None."""
    fields = list(descriptor.fields)
    if [f.number for f in fields] != sorted(f.number for f in fields):
        return None  # MessageToDict's order would differ from the walk's
    model_fields: dict[str, FieldInfo] = cls.model_fields if cls is not None else {}
    enums: Mapping[str, str] = cls._proto_enums if top and cls is not None else {}
    steps: list[_Read] = []
    for field in fields:
        if _in_real_oneof(field):
            return None
        info = model_fields.get(field.name)
        step = _read_kind(field, info, enums.get(field.name))
        if step is None:
            return None
        kind, arg = step
        steps.append(_Read(field.name, kind, arg, top and info is None))
    return _ReadPlan(tuple(steps))


def _read_kind(field: Any, info: FieldInfo | None, enum_prefix: str | None) -> Any:
    annotation = info.annotation if info is not None else None
    if field.type == _FD.TYPE_MESSAGE:
        message_type = field.message_type
        full_name = message_type.full_name
        if full_name.startswith("google.protobuf.") or message_type.GetOptions().map_entry:
            if field.is_repeated:
                return None
            kinds = {_STRUCT: _R_STRUCT, _VALUE: _R_VALUE, _TIMESTAMP: _R_TIME}
            if full_name not in kinds:
                return None
            return kinds[full_name], full_name == _TIMESTAMP and _is_utc_datetime(info)
        model = _model_of(annotation, many=field.is_repeated)
        nested = _nested_read_plan(message_type, model)
        if nested is None:
            return None
        return (_R_MSGS if field.is_repeated else _R_MSG), nested
    if field.is_repeated:
        return (_R_STRS, None) if field.type == _FD.TYPE_STRING else None
    if field.type == _FD.TYPE_ENUM:
        enum = field.enum_type
        if enum.is_closed or field.has_presence or enum.full_name == "google.protobuf.NullValue":
            return None
        return _R_ENUM, _enum_values(enum, enum_prefix)
    if field.type == _FD.TYPE_DOUBLE:
        return (_R_OPT_DOUBLE if field.has_presence else _R_DOUBLE), None
    if field.type not in (_FD.TYPE_STRING, _FD.TYPE_BOOL, _FD.TYPE_INT32):
        return None
    if field.has_presence:
        return _R_OPT, None
    return {_FD.TYPE_STRING: _R_STR, _FD.TYPE_BOOL: _R_BOOL, _FD.TYPE_INT32: _R_INT}[field.type], None


def _enum_values(enum: Any, prefix: str | None) -> dict[int, Any]:
    """number -> what the dict holds: the value's name, or with the model's prefix handled."""
    out: dict[int, Any] = {}
    for value in enum.values:
        if value.number in out:
            continue  # an alias: MessageToDict prints the first name
        label: Any = value.name
        if prefix is not None:
            if label == prefix + "UNSPECIFIED":
                label = _POP
            elif label.startswith(prefix):
                label = label[len(prefix) :].lower()
        out[value.number] = label
    return out


def _nested_read_plan(descriptor: Any, model: type[Any] | None) -> _ReadPlan | None:
    key = (model, descriptor)
    if key in _READ_NESTED:
        return _READ_NESTED[key]
    if key in _BUILDING:
        return None  # a recursive message type: left to the reference path
    _BUILDING.add(key)
    try:
        plan = _READ_NESTED[key] = _read_plan(descriptor, model, top=False)
    finally:
        _BUILDING.discard(key)
    return plan


# ---- what the plans rely on -------------------------------------------------------------------


def _in_real_oneof(field: Any) -> bool:
    # proto3 `optional` fields sit alone in a synthetic oneof; a real one may hold several.
    oneof = field.containing_oneof
    return oneof is not None and len(oneof.fields) > 1


def _model_of(annotation: Any, *, many: bool) -> type[Any] | None:
    """The WireModel class a field holds: X, X | None, or list[X] when many."""
    from riverbeam.types._base import WireModel  # here: _base imports this module

    if many:
        if get_origin(annotation) is not list:
            return None
        (annotation,) = get_args(annotation) or (None,)
    elif get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            return None
        annotation = args[0]
    if isinstance(annotation, type) and issubclass(annotation, WireModel):
        return annotation
    return None



def _is_utc_datetime(info: FieldInfo | None) -> bool:
    """Whether the field is UtcDatetime (or UtcDatetime | None): a datetime validates as the
    Timestamp's RFC 3339 text would."""
    from riverbeam.types._base import UtcDatetime  # here: _base imports this module

    if info is None:
        return False
    probe = FieldInfo.from_annotation(UtcDatetime)
    if info.annotation is probe.annotation and info.metadata == probe.metadata:
        return True
    return bool(info.annotation == (UtcDatetime | None) and not info.metadata)


def _dumps_plainly(cls: type[Any]) -> bool:
    """Whether cls's JSON dict is its fields by name through WireModel's omit-empty rule alone,
    the rule _fill follows."""
    from riverbeam.types._base import WireModel  # here: _base imports this module

    decorators = cls.__pydantic_decorators__
    base = WireModel.__pydantic_decorators__.model_serializers["_omit_empty"].func
    serializers = decorators.model_serializers
    return (
        issubclass(cls, WireModel)
        and not cls.model_computed_fields
        and not decorators.field_serializers
        and list(serializers) == ["_omit_empty"]
        and serializers["_omit_empty"].func is base
        and not any(info.exclude for info in cls.model_fields.values())
    )
