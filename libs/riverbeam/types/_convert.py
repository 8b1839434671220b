"""WireModel <-> protobuf: the json_format reference path, and what the direct plans share.

The reference is the json_format path: model -> JSON dict -> json_format.ParseDict, and back
json_format.MessageToDict -> fix-ups -> validation. What it yields is the contract. The direct
path (_convert_to: model -> message, _convert_from: message -> the dict to validate) follows a
plan made once per (model class, message descriptor) and must yield the same; wherever it
cannot vouch for that (a kind of field with no step, a value of an unexpected type, a value
json_format would refuse or transform, a failure of any sort) it gives up and the reference
path runs, so correctness never depends on it. tests/unit/types/test_types_convert_paths.py
compares the two on generated values of every wire type.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Union, get_args, get_origin

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message as ProtoMessage
from pydantic.fields import FieldInfo

from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:
    from riverbeam.types._base import WireModel

__all__: list[str] = []

JsonObject = dict[str, Any]

EXACT = 2**53
"""A double holds every integer below this exactly: Struct numbers under it come back as int."""

UNBUILT: Any = object()
"""A plan cache's "not built yet" (None there means "no plan: take the reference path")."""

BUILD_LOCK = threading.RLock()
"""Held while plans are built (once per type): a thread never sees another's half-built plan
as a recursive type."""


class Fallback(Exception):  # a signal, not an error
    """The direct path cannot vouch for this value: the json_format path decides."""


def generated(lines: list[str], env: dict[str, Any]) -> Any:
    """The function that `lines` define (one `def` and its body: our own text, made from a
    plan), with `env` as its globals: how each direct path runs a plan as one function."""
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), env, namespace)
    (function,) = namespace.values()
    return function


def indented(lines: list[str]) -> list[str]:
    """`lines` as a block one level in (a `pass` when there are none)."""
    return [f"    {line}" for line in lines] or ["    pass"]


P = TypeVar("P")


class PlanCache(Generic[P]):
    """The plans of one direct path, each made once; None is "no plan: the reference path".

    A top-level plan is made under BUILD_LOCK, so a thread never uses another's half-made one.
    A nested plan is made while its parent's is (the lock held); a type already being made is
    a recursive message type and gets None.
    """

    def __init__(self) -> None:
        self._top: dict[Hashable, P | None] = {}
        # The top-level plans made: a hot caller looks its plan up here (UNBUILT as the
        # default), and calls top() only when it is not made yet.
        self.made: Mapping[Hashable, P | None] = self._top
        self._nested: dict[Hashable, P | None] = {}
        self._making: set[Hashable] = set()

    def top(self, key: Hashable, make: Callable[[], P | None]) -> P | None:
        plan = self._top.get(key, UNBUILT)
        if plan is UNBUILT:
            with BUILD_LOCK:
                plan = self._top.get(key, UNBUILT)
                if plan is UNBUILT:
                    plan = self._top[key] = make()
        return plan

    def nested(self, key: Hashable, make: Callable[[], P | None]) -> P | None:
        if key in self._nested:
            return self._nested[key]
        if key in self._making:
            return None
        self._making.add(key)
        try:
            plan = self._nested[key] = make()
        finally:
            self._making.discard(key)
        return plan


# ---- the reference: json_format ---------------------------------------------------------------


def _ints_back(value: Any) -> Any:
    """google.protobuf.Struct stores every number as a double; give integral ones back as int."""
    if isinstance(value, float) and value.is_integer() and abs(value) < EXACT:
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
        if field.type == FieldDescriptor.TYPE_STRING:
            if value == "" and not field.has_presence and not field.is_repeated:
                del data[field.name]
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            nested = field.message_type
            if nested.full_name.startswith("google.protobuf."):
                continue  # Struct, Value, Timestamp: free-form or scalar in JSON
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, dict):
                    _drop_unset_strings(nested, item)


def _to_proto_json(model: WireModel) -> Any:
    """The message of model through its JSON dict and json_format.ParseDict (the reference)."""
    from google.protobuf import json_format  # with the first value the direct path gives up on

    msg = model.proto_type()()
    try:
        json_format.ParseDict(model._enums_to_proto(model.to_json_dict()), msg)
    except json_format.ParseError as exc:
        raise RiverbeamError(ErrorCode.INVALID_DOCUMENT, f"{type(model).__name__}: {exc}") from exc
    return msg


def _proto_dict_json(cls: type[WireModel], msg: ProtoMessage) -> JsonObject:
    """The dict from_proto validates, through json_format.MessageToDict (the reference)."""
    from google.protobuf import json_format

    try:
        data: JsonObject = json_format.MessageToDict(
            msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
    except (ValueError, TypeError, json_format.Error) as exc:
        # A message no JSON can express (an out-of-range Timestamp, NaN inside a Struct) is
        # bad input from the caller, not an internal error.
        raise RiverbeamError(ErrorCode.INVALID_DOCUMENT, f"{cls.__name__}: {exc}") from None
    data = _ints_back(data)
    _drop_unset_strings(msg.DESCRIPTOR, data)
    # Printed defaults of fields this model does not have (InvokePayload has no actions).
    for key in [k for k in data if k not in cls.model_fields and not data[k]]:
        del data[key]
    return cls._enums_from_proto(data)


def _from_proto_json(cls: type[WireModel], msg: ProtoMessage) -> Any:
    """from_proto as it was: the reference dict, validated."""
    return cls.parse(_proto_dict_json(cls, msg))


# ---- what the plans rely on -------------------------------------------------------------------


def in_real_oneof(field: Any) -> bool:
    """Whether field shares a oneof (proto3 `optional` fields sit alone in a synthetic one)."""
    oneof = field.containing_oneof
    return oneof is not None and len(oneof.fields) > 1


def model_of(annotation: Any, *, many: bool) -> type[Any] | None:
    """The WireModel class a field holds: X or X | None, or list[X] when many; else None."""
    from riverbeam.types._base import WireModel  # here: _base imports the converters

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


def is_utc_datetime(info: FieldInfo | None) -> bool:
    """Whether the field is UtcDatetime or UtcDatetime | None: then a datetime validates exactly
    as the RFC 3339 text of a Timestamp does (both end as the same aware UTC datetime)."""
    from riverbeam.types._base import UtcDatetime  # here: _base imports the converters

    if info is None:
        return False
    probe = FieldInfo.from_annotation(UtcDatetime)
    if info.annotation is probe.annotation and info.metadata == probe.metadata:
        return True
    return bool(info.annotation == (UtcDatetime | None) and not info.metadata)


def dumps_plainly(cls: type[Any]) -> bool:
    """Whether cls's JSON dict is its fields by name under WireModel's omit-empty rule alone
    (no computed, excluded or custom-serialized fields): the rule _convert_to follows."""
    from riverbeam.types._base import WireModel  # here: _base imports the converters

    if not (isinstance(cls, type) and issubclass(cls, WireModel)):
        return False
    decorators = cls.__pydantic_decorators__
    serializers = decorators.model_serializers
    base = WireModel.__pydantic_decorators__.model_serializers["_omit_empty"].func
    return (
        not cls.model_computed_fields
        and not decorators.field_serializers
        and list(serializers) == ["_omit_empty"]
        and serializers["_omit_empty"].func is base
        and not any(info.exclude for info in cls.model_fields.values())
    )


def enums_are_enums(cls: type[Any], descriptor: Any) -> bool:
    """Whether every field cls._proto_enums names is an enum field of descriptor, if there (the
    enum hooks would rewrite a field of another type too; the plans only handle enums)."""
    for name in cls._proto_enums:
        field = descriptor.fields_by_name.get(name)
        if field is not None and field.type != FieldDescriptor.TYPE_ENUM:
            return False
    return True
