"""A sketch, for comparison only: WireModel <-> protobuf without going through JSON.

The library converts a model to protobuf by dumping it to a JSON dict and feeding that to
json_format.ParseDict, and back with json_format.MessageToDict and validation. Both json_format
functions walk the message descriptor in pure Python and convert every value to and from its
JSON text form (timestamps as RFC 3339 strings, for instance). This sketch copies attribute
values straight across, following a plan made once per message type from its descriptor. The
benchmark checks that it gives the same message (and the same model back) for every value it
times, so the figures compare like with like. It is not used by the library, and it handles
only what the timed types need (enum prefixes only on the top-level model, for instance).
"""

from __future__ import annotations

import functools
from datetime import UTC
from typing import Any, NamedTuple, TypeVar

from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtoMessage

from riverbeam.types import WireModel
from riverbeam.types._base import _ints_back

__all__ = ["from_proto_direct", "to_proto_direct"]

M = TypeVar("M", bound=WireModel)

# What to do with a field.
_SCALAR, _PRESENT, _REPEATED, _MESSAGES, _MESSAGE, _STRUCT, _TIMESTAMP, _ENUM = range(8)


class _Field(NamedTuple):
    name: str
    how: int
    enum: Any = None


@functools.cache
def _plan(descriptor: Descriptor) -> tuple[_Field, ...]:
    out: list[_Field] = []
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            assert field.message_type is not None
            kind = field.message_type.full_name
            if field.is_repeated:
                how = _MESSAGES
            elif kind in ("google.protobuf.Struct", "google.protobuf.Value"):
                how = _STRUCT
            elif kind == "google.protobuf.Timestamp":
                how = _TIMESTAMP
            else:
                how = _MESSAGE
            out.append(_Field(field.name, how))
        elif field.type == FieldDescriptor.TYPE_ENUM:
            out.append(_Field(field.name, _ENUM, field.enum_type))
        elif field.is_repeated:
            out.append(_Field(field.name, _REPEATED))
        else:
            out.append(_Field(field.name, _PRESENT if field.has_presence else _SCALAR))
    return tuple(out)


def _set_value(target: Any, value: Any) -> None:
    if isinstance(target, struct_pb2.Struct):
        target.update(value)
        return
    holder = struct_pb2.Struct()
    holder.update({"v": value})
    target.CopyFrom(holder.fields["v"])


def _fill(msg: Any, model: Any) -> None:
    enums = getattr(type(model), "_proto_enums", {})
    values = model.__dict__
    for name, how, enum in _plan(msg.DESCRIPTOR):
        value = values.get(name)
        if value is None:
            continue
        if how in (_SCALAR, _PRESENT):
            setattr(msg, name, value)
        elif how == _MESSAGE:
            _fill(getattr(msg, name), value)
        elif how == _MESSAGES:
            repeated = getattr(msg, name)
            for item in value:
                _fill(repeated.add(), item)
        elif how == _STRUCT:
            if value or not isinstance(value, dict):
                _set_value(getattr(msg, name), value)
        elif how == _TIMESTAMP:
            getattr(msg, name).FromDatetime(value)
        elif how == _REPEATED:
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, enum.values_by_name[enums[name] + str(value).upper()].number)


def to_proto_direct(model: WireModel) -> Any:
    """The protobuf message of `model`, field by field."""
    msg = model.proto_type()()
    _fill(msg, model)
    return msg


def _read(msg: Any, enums: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, how, enum in _plan(msg.DESCRIPTOR):
        if how == _SCALAR:
            value = getattr(msg, name)
            if value != "":
                out[name] = value
        elif how == _PRESENT:
            if msg.HasField(name):
                out[name] = getattr(msg, name)
        elif how == _MESSAGES:
            items = getattr(msg, name)
            if items:
                out[name] = [_read(item, {}) for item in items]
        elif how == _REPEATED:
            items = getattr(msg, name)
            if items:
                out[name] = list(items)
        elif how == _ENUM:
            number = getattr(msg, name)
            label = enum.values_by_number[number].name
            prefix = enums.get(name, "")
            if number and label.startswith(prefix):
                out[name] = label[len(prefix) :].lower()
        elif not msg.HasField(name):
            continue
        elif how == _STRUCT:
            out[name] = _ints_back(json_format.MessageToDict(getattr(msg, name)))
        elif how == _TIMESTAMP:
            out[name] = getattr(msg, name).ToDatetime(tzinfo=UTC)
        else:
            out[name] = _read(getattr(msg, name), {})
    return out


def from_proto_direct(cls: type[M], msg: ProtoMessage) -> M:
    """The model of `msg`, validated (nested values are validated by the parent model)."""
    data = _read(msg, dict(cls._proto_enums))
    fields = cls.model_fields
    for key in [k for k in data if k not in fields]:
        del data[key]
    return cls.parse(data)
