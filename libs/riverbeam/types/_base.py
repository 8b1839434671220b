"""The base of every wire model: seed-exact JSON and lossless protobuf conversion."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Self

from google.protobuf.message import Message as ProtoMessage
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
    model_serializer,
)
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import SerializerFunctionWrapHandler

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import _convert, _convert_build, _convert_from, _convert_to
from riverbeam.types._convert import _ints_back as _ints_back  # bench/_direct.py reads it here

__all__ = [
    "INT32_MAX",
    "JsonObject",
    "NonEmptyStr",
    "OptionalJsonObject",
    "UUIDStr",
    "UtcDatetime",
    "WireModel",
    "validation_error",
]

JsonObject = dict[str, Any]

INT32_MAX = 2**31 - 1
"""The largest value of a protobuf int32 field; wire integers are bounded by it."""

_UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_UUID_RE = re.compile(_UUID_PATTERN)


def _canonical_uuid(value: str) -> str:
    # Only the 8-4-4-4-12 hyphenated form is accepted on the wire (uuid.UUID alone would also
    # take braces, "urn:uuid:" and misplaced hyphens); it is kept lowercase.
    if not _UUID_RE.fullmatch(value):
        raise PydanticCustomError(
            "uuid_format",
            "'{value}' is not a UUID (8-4-4-4-12 hex digits)",
            {"value": value[:64]},
        )
    # str(uuid.UUID(value)) of the hyphenated form is value with its hex digits lowercased.
    return value.lower()


UUIDStr = Annotated[
    str,
    AfterValidator(_canonical_uuid),
    WithJsonSchema({"type": "string", "format": "uuid", "pattern": _UUID_PATTERN}),
]
"""A UUID kept as its canonical lowercase string."""

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
"""A required string. In proto3 an empty string is an absent one, so "" is refused."""


def _to_utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError(
            "datetime_range", "{value} is out of range in UTC", {"value": str(value)}
        ) from None


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]
"""A timezone-aware time, held in UTC: the wire (protobuf Timestamp, "...Z" in JSON) is UTC."""


def _none_if_empty(value: JsonObject | None) -> JsonObject | None:
    return value or None


OptionalJsonObject = Annotated[JsonObject | None, AfterValidator(_none_if_empty)]
"""Free-form JSON object that is omitted when empty: {} is held as None, as the wire shows it."""


def validation_error(model: str, exc: ValidationError) -> RiverbeamError:
    """Translate a pydantic ValidationError into the catalog code that fits its first problem."""
    errors = exc.errors()
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc)}
    path = tuple(first.get("loc", ()))
    loc = ".".join(str(p) for p in path)
    field = str(path[-1]) if path else ""
    msg = str(first.get("msg", ""))
    kind = str(first.get("type", ""))
    # An empty required string is a missing one: that is what proto3 makes of it.
    if kind == "missing" or (kind == "string_too_short" and first.get("input") == ""):
        missing_interaction = field == "interaction_id"
        code = ErrorCode.MISSING_INTERACTION_ID if missing_interaction else ErrorCode.MISSING_FIELD
    elif kind == "literal_error":
        code = ErrorCode.INVALID_ENUM
    elif kind == "uuid_format":
        # The last path element, not a suffix of the dotted path: interaction_id ends in action_id.
        code = ErrorCode.ACTION_ID_NOT_UUID if field == "action_id" else ErrorCode.INVALID_UUID
    else:
        code = ErrorCode.INVALID_DOCUMENT
    message = f"{model}.{loc}: {msg}" if loc else f"{model}: {msg}"
    return RiverbeamError(code, message, field=loc or None)


_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


class WireModel(BaseModel):
    """A type that crosses a process boundary.

    Dumps omit None and empty optional containers (so the JSON is the seed's), converts to and
    from its protobuf message, and translates validation failures to catalog errors.
    """

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_assignment=False, allow_inf_nan=False
    )

    _proto: ClassVar[type[ProtoMessage] | None] = None
    _always: ClassVar[frozenset[str]] = frozenset()
    _proto_enums: ClassVar[Mapping[str, str]] = {}

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        always = self._always
        fields = type(self).model_fields
        out: JsonObject = {}
        for key, value in data.items():
            if key not in always:
                if value is None:
                    continue
                # An empty list or object is omitted, but a nested model that dumps as {} is
                # a present value, and so is an empty container held by a free-form JSON field.
                held = getattr(self, key, None)
                field = fields.get(key)
                if (
                    isinstance(held, list | dict)
                    and not held
                    and not (field is not None and field.annotation is Any)
                ):
                    continue
            out[key] = value
        return out

    # ---- JSON ---------------------------------------------------------------------------------
    def to_json_dict(self) -> JsonObject:
        """The JSON object of this value, as the seed shows it."""
        out: JsonObject = self.model_dump(mode="json", by_alias=False)
        return out

    def to_json(self) -> str:
        """The compact JSON text of this value."""
        # json.dumps(..., separators=(",", ":"), ensure_ascii=False) without building the
        # encoder each time. Not model_dump_json(): it writes some floats differently (1e-05 as
        # 0.00001), and the JSON on NATS stays byte for byte what it was.
        return _COMPACT_JSON.encode(self.to_json_dict())

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
        """The protobuf message class this model converts to."""
        if cls._proto is None:
            raise TypeError(f"{cls.__name__} has no protobuf message")
        return cls._proto

    def to_proto(self) -> Any:
        """The protobuf message of this value.

        It is the message json_format.ParseDict makes of to_json_dict() (enums named through
        _proto_enums), built directly from the attributes; a value that ParseDict refuses is
        a BEM-016 (INVALID_DOCUMENT) error.
        """
        msg = _convert_to.to_message(self)
        return _convert._to_proto_json(self) if msg is None else msg

    def to_proto_in(self, target: Any) -> None:
        """Make `target` the message to_proto() gives, in place: `target` is an empty message
        of this model's protobuf type, a field of the message being built (`resp.run`, or
        `resp.history.add()`), so the message is not built apart and then copied in.

        The field is present afterwards, as when the message is assigned; a value to_proto
        refuses raises the same error.
        """
        if type(target) is not self.proto_type():
            raise TypeError(f"{type(target).__name__} is not {self.proto_type().__name__}")
        if not _convert_to.fill_message(self, target):
            target.CopyFrom(self.to_proto())
        target.SetInParent()

    @classmethod
    def from_proto(cls, msg: ProtoMessage) -> Self:
        """Build the model from its protobuf message, validating it.

        proto3 cannot tell an empty string from an absent one, so a string field without
        presence that arrives as "" is treated as absent: a required one is reported missing
        (BEM-011, or BEM-062 for interaction_id) and a defaulted one takes its default.
        The dict validated is the one json_format.MessageToDict and its fix-ups make of the
        message, read directly from its fields; where validating it would change nothing (a
        record as the services send it), the model is built from the fields instead
        (_convert_build), equal to what validation gives.
        """
        built: Self | None = _convert_build.build(cls, msg)
        if built is not None:
            return built
        data = _convert_from.to_dict(cls, msg)
        return cls.parse(_convert._proto_dict_json(cls, msg) if data is None else data)

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
