"""The base of every wire model: seed-exact JSON and lossless protobuf conversion."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Self

from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, model_serializer
from pydantic_core.core_schema import SerializerFunctionWrapHandler


from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["JsonObject", "UUIDStr", "WireModel", "validation_error"]

JsonObject = dict[str, Any]


def _canonical_uuid(value: str) -> str:
    try:
        parsed = uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        raise ValueError(f"{value!r} is not a UUID") from None
    # Only the canonical 36-character hyphenated form is accepted on the wire.
    if len(value) != 36:
        raise ValueError(f"{value!r} is not a UUID in canonical form")
    return str(parsed)


UUIDStr = Annotated[str, AfterValidator(_canonical_uuid)]
"""A UUID kept as its canonical lowercase string."""


def _ints_back(value: Any) -> Any:
    """google.protobuf.Struct stores every number as a double; give integral ones back as int."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _ints_back(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints_back(v) for v in value]
    return value


def validation_error(model: str, exc: ValidationError) -> RiverbeamError:
    """Translate a pydantic ValidationError into the catalog code that fits its first problem."""
    first = exc.errors()[0] if exc.errors() else {"type": "", "loc": (), "msg": str(exc)}
    loc = ".".join(str(p) for p in first.get("loc", ()))
    msg = str(first.get("msg", ""))
    kind = str(first.get("type", ""))
    if kind == "missing":
        code = ErrorCode.MISSING_FIELD
    elif kind == "literal_error":
        code = ErrorCode.INVALID_ENUM
    elif "UUID" in msg:
        code = ErrorCode.ACTION_ID_NOT_UUID if loc.endswith("action_id") else ErrorCode.INVALID_UUID
    else:
        code = ErrorCode.INVALID_DOCUMENT
    return RiverbeamError(code, f"{model}.{loc}: {msg}" if loc else f"{model}: {msg}", field=loc or None)


class WireModel(BaseModel):
    """A type that crosses a process boundary.

    Dumps omit None and empty optional containers (so the JSON is the seed's), converts to and
    from its protobuf message, and translates validation failures to catalog errors.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=False)

    _proto: ClassVar[type[ProtoMessage] | None] = None
    _always: ClassVar[frozenset[str]] = frozenset()
    _proto_enums: ClassVar[Mapping[str, str]] = {}

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        always = self._always
        return {
            k: v
            for k, v in data.items()
            if k in always or not (v is None or (isinstance(v, list | dict) and not v))
        }

    # ---- JSON ---------------------------------------------------------------------------------
    def to_json_dict(self) -> JsonObject:
        """The JSON object of this value, as the seed shows it."""
        out: JsonObject = self.model_dump(mode="json", by_alias=False)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def parse(cls, data: Any) -> Self:
        """Validate a JSON object (or JSON text / bytes), raising a RiverbeamError on bad input."""
        try:
            if isinstance(data, str | bytes | bytearray):
                return cls.model_validate_json(data)
            return cls.model_validate(data)
        except ValidationError as exc:
            raise validation_error(cls.__name__, exc) from None

    # ---- protobuf -----------------------------------------------------------------------------
    @classmethod
    def proto_type(cls) -> type[ProtoMessage]:
        if cls._proto is None:
            raise TypeError(f"{cls.__name__} has no protobuf message")
        return cls._proto

    def to_proto(self) -> Any:
        """The protobuf message of this value."""
        msg = self.proto_type()()
        json_format.ParseDict(self._enums_to_proto(self.to_json_dict()), msg)
        return msg

    @classmethod
    def from_proto(cls, msg: ProtoMessage) -> Self:
        """Build the model from its protobuf message, validating it."""
        data = json_format.MessageToDict(
            msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        return cls.parse(cls._enums_from_proto(_ints_back(data)))

    @classmethod
    def _enums_to_proto(cls, data: JsonObject) -> JsonObject:
        for field, prefix in cls._proto_enums.items():
            if data.get(field) is not None:
                data[field] = prefix + str(data[field]).upper()
        return data

    @classmethod
    def _enums_from_proto(cls, data: JsonObject) -> JsonObject:
        for field, prefix in cls._proto_enums.items():
            value = data.get(field)
            if isinstance(value, str):
                if value == prefix + "UNSPECIFIED":
                    data.pop(field)
                elif value.startswith(prefix):
                    data[field] = value[len(prefix) :].lower()
        return data
