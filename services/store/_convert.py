"""Free-form protobuf values (Struct, Value) to Python, as the store expects them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2


def _ints_back(value: Any) -> Any:
    # Struct keeps every number as a double; JSON integers should come back as int.
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _ints_back(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints_back(v) for v in value]
    return value


def struct_or_none(message: Any, field: str) -> dict[str, Any] | None:
    """The dict of a Struct field, or None when the field is unset."""
    if not message.HasField(field):
        return None
    # json_format with the first free-form value: a store that has served none idles without it.
    from google.protobuf import json_format

    struct: struct_pb2.Struct = getattr(message, field)
    out: dict[str, Any] = _ints_back(json_format.MessageToDict(struct))
    return out


def value_or_none(message: Any, field: str) -> Any:
    """The Python value of a Value field, or None when the field is unset."""
    if not message.HasField(field):
        return None
    from google.protobuf import json_format

    return _ints_back(json_format.MessageToDict(getattr(message, field)))


def optional(message: Any, field: str) -> str | None:
    """An `optional string` field: None when unset."""
    return str(getattr(message, field)) if message.HasField(field) else None


def enum_name(enum: Any, value: int, prefix: str) -> str:
    """RUN_STATUS_COMPLETED -> "completed"; an unknown number gives "" (rejected downstream)."""
    try:
        name = str(enum.Name(value))
    except ValueError:
        return ""
    return name.removeprefix(prefix).lower()


def timestamp_or_none(message: Any, field: str) -> datetime | None:
    """A Timestamp field as an aware UTC datetime, or None when unset."""
    if not message.HasField(field):
        return None
    stamp: datetime = getattr(message, field).ToDatetime(tzinfo=UTC)
    return stamp
