"""protobuf message -> the model itself, where validating the dict would change nothing.

from_proto reads a message into a dict (_convert_from) and validates it. For the records the
services send each other (a run, a session, a message) the validation only confirms what the
fields' protobuf types already say: a string is a str, an int32 is in range, a Timestamp to the
microsecond is the aware UTC datetime _convert_from makes of it. Building the model from the
message's set fields (one ListFields call, not a HasField and a getattr per field) skips the
dict and pydantic: 0.6 to 0.75 of the cost of from_proto for those records.

It builds only what validation would build: each model field is converted as _convert_from
reads it and checked as its annotation validates (the annotation's own validators run: UUIDStr,
OptionalJsonObject); the fields given are the keys the dict would hold (printed defaults
included), the others take their defaults. A model with anything this module does not know (a
validator, a config other than WireModel's, a private attribute, an alias other than alias
choices led by the field's name, a mutable default, a field type _shape does not list) has no
plan, and any value that is not plainly valid (an empty required string, an unknown enum
number, a Timestamp with nanoseconds, a NaN, a negative count, a nested model without a plan)
gives up on the whole message: the dict is validated as before, with its errors. Whatever this
module returns is what validation returns: tests/unit/types/test_types_convert_build.py
compares the two on generated values and messages, value types, order and fields set included.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Union, cast, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MinLen
from google.protobuf.descriptor import FieldDescriptor as _FD
from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from riverbeam.types import _convert_from as _from
from riverbeam.types._convert import EXACT, Fallback, PlanCache
from riverbeam.types._copying import _slots_of

if TYPE_CHECKING:
    from riverbeam.types._base import WireModel

__all__ = ["build"]

# What validation does with a field's value (its annotation, without `| None`).
_ANY, _STR, _INT, _BOOL, _FLOAT, _LITERAL, _TIME, _JSON, _STRS, _MODEL, _MODELS = range(11)

_BOUNDS = (Gt, Ge, Lt, Le)
# Defaults validation hands out as they are (a mutable one it copies: such a field has no plan).
_SHARED_DEFAULTS = (type(None), str, int, bool, float)

# WireModel's configuration, and keys a subclass may add without changing validation.
_BASE_CONFIG = {
    "extra": "forbid",
    "populate_by_name": True,
    "validate_assignment": False,
    "allow_inf_nan": False,
}
_HARMLESS_CONFIG = {"json_schema_extra", "title"}


Convert = Callable[[Any], Any]
"""convert(value): a set field's value (as ListFields gives it) as validation makes it;
raises on any doubt."""

# What an unset field gives: its default (left out of the dict), a value, a new list, or a
# refusal (required, or a printed default validation refuses).
_UNSET_ABSENT, _UNSET_VALUE, _UNSET_FRESH, _UNSET_REFUSED = range(4)


class _Plan(NamedTuple):
    cls: type[Any]
    slots: Any  # _copying._slots_of(cls)
    by_number: dict[int, tuple[str, Convert | None]]  # message field -> model field, converter
    base: dict[str, Any]  # every model field, in order, as an all-default message builds it
    base_given: frozenset[str]  # the fields the dict holds for a default (printed defaults)
    fresh: tuple[tuple[str, Callable[[], Any]], ...]  # unset: a new value each time
    needed: frozenset[str]  # fields that must be set (required, or a default validation refuses)


_PLANS: PlanCache[_Plan] = PlanCache()


def build(cls: type[WireModel], msg: Any) -> Any | None:
    """The model cls validates from msg, built without validation, or None: validate then."""
    descriptor = getattr(msg, "DESCRIPTOR", None)
    if descriptor is None:
        return None
    plan = _PLANS.top((cls, descriptor), lambda: _plan(cls, descriptor, top=True))
    if plan is None:
        return None
    try:
        return _build(msg, plan)
    except Exception:  # any doubt: the dict is validated, and its errors raised
        return None


def _build(msg: Any, plan: _Plan) -> Any:
    # ListFields: the set fields (and non-default scalars) in one call, instead of a HasField
    # and a getattr for each field; the others are as an all-default message has them.
    values = plan.base.copy()
    listed: set[str] = set()
    by_number = plan.by_number
    for field, value in msg.ListFields():
        name, convert = by_number[field.number]
        values[name] = value if convert is None else convert(value)
        listed.add(name)
    for name, make in plan.fresh:
        if name not in listed:
            values[name] = make()
    if not plan.needed <= listed:
        raise Fallback  # validation reports what is missing (or refuses the default)
    alloc, set_dict, set_fields, set_extra, set_private = plan.slots
    model = alloc(plan.cls)
    set_dict(model, values)
    listed |= plan.base_given  # a set, as pydantic keeps it (model_copy updates it)
    set_fields(model, listed)
    set_extra(model, None)
    set_private(model, None)
    return model


# ---- converters: one per field, made once per plan --------------------------------------------


def _string(nonempty: bool, literal: frozenset[str] | None, after: Convert | None) -> Convert:
    def convert(value: Any) -> Any:
        if nonempty and not value:
            raise Fallback  # "" is too short for a NonEmptyStr
        if literal is not None and value not in literal:
            raise Fallback
        return value if after is None else after(value)

    return convert


def _enum(labels: dict[int, Any], literal: frozenset[str] | None) -> Convert:
    def convert(number: Any) -> Any:
        value = labels.get(number, number)
        # An unknown number, a name the model does not know, or ..._UNSPECIFIED under another
        # number (absent in the dict): validation decides.
        if type(value) is not str or (literal is not None and value not in literal):
            raise Fallback
        return value

    return convert


def _number(is_float: bool, bounds: tuple[tuple[int, Any], ...]) -> Convert | None:
    if not is_float and not bounds:
        return None  # an int32 or a bool is the int or bool validation gives back

    def convert(value: Any) -> Any:
        if is_float:
            # As validation reads _convert_from's value: an integral double comes as int and is
            # made a float again (-0.0 as 0.0); NaN and infinities are refused.
            if value - value != 0.0:
                raise Fallback
            if value.is_integer() and abs(value) < EXACT:
                value = float(int(value))
        if bounds and not _within(value, bounds):
            raise Fallback
        return value

    return convert


def _within(value: float, bounds: tuple[tuple[int, Any], ...]) -> bool:
    for op, limit in bounds:
        if not (
            value > limit
            if op == _GT
            else value >= limit
            if op == _GE
            else value < limit
            if op == _LT
            else value <= limit
        ):
            return False
    return True


_GT, _GE, _LT, _LE = range(4)


def _limits(metadata: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """(op, limit) of each annotated_types bound."""
    out: list[tuple[int, Any]] = []
    for bound in metadata:
        if isinstance(bound, Gt):
            out.append((_GT, bound.gt))
        elif isinstance(bound, Ge):
            out.append((_GE, bound.ge))
        elif isinstance(bound, Lt):
            out.append((_LT, bound.lt))
        else:
            out.append((_LE, bound.le))
    return tuple(out)


def _time(stamp: Any) -> Any:
    value = _from._time(stamp, True)
    if type(value) is not datetime:
        raise Fallback  # nanoseconds: the text is validated
    # In UTC already: UtcDatetime's astimezone(UTC) would give back this very object.
    return value


def _struct(after: Convert | None) -> Convert:
    if after is None:
        return _from._struct

    def convert(struct: Any) -> Any:
        return after(_from._struct(struct))

    return convert


def _message(plan: _Plan | None) -> Convert:
    def convert(msg: Any) -> Any:
        if plan is None:
            raise Fallback  # a nested model without a plan: validated
        return _build(msg, plan)

    return convert


def _messages(plan: _Plan | None) -> Convert:
    def convert(items: Any) -> Any:
        if plan is None:
            raise Fallback
        return [_build(item, plan) for item in items]

    return convert


# ---- plans ------------------------------------------------------------------------------------


def _plan(cls: type[Any], descriptor: Any, *, top: bool) -> _Plan | None:
    """How to build cls from a message of descriptor, or None when it is not plainly valid."""
    if not _plain_model(cls):
        return None
    reading = _from._plan(descriptor, cls, top=top)
    if reading is None:
        return None
    steps = {step.name: step for step in reading.steps}
    if set(steps) - set(cls.model_fields):
        return None  # a message field the model lacks: validation would refuse a set one
    by_number: dict[int, tuple[str, Convert | None]] = {}
    base: dict[str, Any] = {}
    base_given: set[str] = set()
    fresh: list[tuple[str, Callable[[], Any]]] = []
    needed: set[str] = set()
    for name, info in cls.model_fields.items():
        if not _plain_default(info):
            return None
        step = steps.get(name)
        if step is None:
            if info.is_required():
                return None
            unset, convert = (_UNSET_ABSENT, None), None
        else:
            field = descriptor.fields_by_name[name]
            found = _converter(step.kind, step.arg, info, field)
            if found is None:
                return None
            convert, unset = found
            by_number[field.number] = (name, convert)
        how, value = unset
        if how == _UNSET_ABSENT and info.is_required():
            how = _UNSET_REFUSED
        if how == _UNSET_REFUSED:
            needed.add(name)
            base[name] = None
        elif how == _UNSET_VALUE:
            base[name] = value
            base_given.add(name)
        elif how == _UNSET_FRESH:
            base[name] = None
            base_given.add(name)
            fresh.append((name, list))
        elif info.default_factory is not None:
            base[name] = None
            fresh.append((name, info.default_factory))
        else:
            base[name] = info.default
    return _Plan(
        cls,
        _slots_of(cast("type[BaseModel]", cls)),
        by_number,
        base,
        frozenset(base_given),
        tuple(fresh),
        frozenset(needed),
    )


def _plain_model(cls: type[Any]) -> bool:
    """Whether validating cls is validating its fields: no validators, hooks or aliases."""
    from riverbeam.types._base import WireModel  # here: _base imports the converters

    if not (isinstance(cls, type) and issubclass(cls, WireModel)):
        return False
    config: ConfigDict = cls.model_config
    if any(config.get(k) != v for k, v in _BASE_CONFIG.items()):
        return False
    if set(config) - set(_BASE_CONFIG) - _HARMLESS_CONFIG:
        return False
    decorators = cls.__pydantic_decorators__
    if (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
    ):
        return False
    if cls.__pydantic_post_init__ is not None or cls.__private_attributes__:
        return False
    if cls.__pydantic_root_model__:
        return False
    return all(
        info.alias is None and _read_by_name(name, info) and not info.validate_default
        for name, info in cls.model_fields.items()
    )


def _read_by_name(name: str, info: FieldInfo) -> bool:
    """Whether validation reads the field from the key of its name: it has no validation alias,
    or alias choices that start with the name (InvokeAuthContext.org_id, also organization_id;
    the message has no field of the other names, so the dict has no key of them)."""
    alias = info.validation_alias
    return alias is None or (isinstance(alias, AliasChoices) and alias.choices[0] == name)


def _plain_default(info: FieldInfo) -> bool:
    if info.default_factory is None:
        return info.is_required() or type(info.default) in _SHARED_DEFAULTS
    return info.default is PydanticUndefined and not info.default_factory_takes_validated_data


def _converter(
    kind: int, arg: Any, info: FieldInfo, proto: Any
) -> tuple[Convert | None, tuple[int, Any]] | None:
    """The converter of a model field from the message field _convert_from reads with kind,
    and what an unset one gives (_UNSET_*, value), or None."""
    shape = _shape(info)
    if shape is None:
        return None
    check, _, after, extra = shape
    proto_type = proto.type
    absent = (_UNSET_ABSENT, None)
    if check in (_STR, _LITERAL):
        literal = extra if check == _LITERAL else None
        if kind == _from._ENUM:
            if after is not None:
                return None
            convert = _enum(arg, literal)
            return convert, _unset(lambda: convert(0), labels=arg)
        if kind in (_from._STR, _from._OPT) and proto_type == _FD.TYPE_STRING:
            nonempty = check == _STR and bool(extra) and kind == _from._OPT
            return _string(nonempty, literal, after), absent  # unset: "" is absent
        return None
    if check in (_INT, _BOOL, _FLOAT):
        expected = {_INT: _FD.TYPE_INT32, _BOOL: _FD.TYPE_BOOL, _FLOAT: _FD.TYPE_DOUBLE}[check]
        if proto_type != expected:
            return None
        number = _number(check == _FLOAT, _limits(tuple(extra or ())))
        if kind in (_from._OPT, _from._OPT_DOUBLE):
            return number, absent
        if kind not in (_from._INT, _from._BOOL, _from._DOUBLE):
            return None
        default = proto.default_value
        return number, _unset(lambda: default if number is None else number(default))
    if check == _TIME and kind == _from._TIME:
        return _time, absent
    if check in (_JSON, _ANY) and kind == _from._STRUCT:
        return _struct(after), absent
    if check == _ANY and kind == _from._VALUE:
        return _from._value, absent
    if check == _STRS and kind == _from._STRS:
        return list, (_UNSET_FRESH, None)
    if check == _MODEL and kind == _from._MSG:
        return _message(_nested(proto.message_type, extra)), absent
    if check == _MODELS and kind == _from._MSGS:
        return _messages(_nested(proto.message_type, extra)), (_UNSET_FRESH, None)
    return None


def _unset(value_of: Callable[[], Any], labels: dict[int, Any] | None = None) -> tuple[int, Any]:
    """What a field without presence gives when unset: its printed default as converted."""
    if labels is not None and labels.get(0, 0) is _from._POP:
        return _UNSET_ABSENT, None  # ..._UNSPECIFIED: left out of the dict
    try:
        return _UNSET_VALUE, value_of()
    except Fallback:
        return _UNSET_REFUSED, None


def _shape(info: FieldInfo) -> tuple[int, bool, Callable[[Any], Any] | None, Any] | None:
    """(check, optional, after-validator, extra) for the field's annotation, or None."""
    from riverbeam.types._base import (  # here: _base imports the converters
        JsonObject,
        NonEmptyStr,
        OptionalJsonObject,
        UtcDatetime,
        UUIDStr,
        WireModel,
    )

    # The Annotated types of _base: (annotation, metadata) as a field holds them.
    known: tuple[tuple[Any, int, bool, Any], ...] = (
        (UtcDatetime, _TIME, False, None),
        (UUIDStr, _STR, False, False),
        (OptionalJsonObject, _JSON, True, None),
        (NonEmptyStr, _STR, False, True),
    )
    annotation, metadata = info.annotation, list(info.metadata)
    for alias, check, optional, extra in known:
        probe = FieldInfo.from_annotation(alias)
        if annotation == probe.annotation and metadata == list(probe.metadata):
            # A Timestamp read as a datetime is already in UTC: astimezone(UTC) returns it.
            after = None if check == _TIME else _after_of(probe)
            return check, optional, after, extra
    optional = False
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1 or len(args) == len(get_args(annotation)):
            return None
        optional, annotation = True, args[0]
        for alias, check, _, extra in known:
            if annotation == alias and check != _JSON and not metadata:
                after = None if check == _TIME else _after_of(FieldInfo.from_annotation(alias))
                return check, True, after, extra
    if metadata:
        if annotation is str and len(metadata) == 1 and isinstance(metadata[0], MinLen):
            return (_STR, optional, None, True) if metadata[0].min_length == 1 else None
        if annotation in (int, float) and all(isinstance(m, _BOUNDS) for m in metadata):
            check = _INT if annotation is int else _FLOAT
            return check, optional, None, tuple(metadata)
        return None
    if annotation is Any:
        return _ANY, True, None, None
    if annotation is str:
        return _STR, optional, None, False
    if annotation is int:
        return _INT, optional, None, ()
    if annotation is bool:
        return _BOOL, optional, None, None
    if annotation is float:
        return _FLOAT, optional, None, None
    if annotation == JsonObject:
        return _JSON, optional, None, None
    if annotation == list[str] and not optional:
        return _STRS, False, None, None
    if get_origin(annotation) is Literal:
        values = get_args(annotation)
        if not values or not all(type(v) is str for v in values):
            return None
        return _LITERAL, optional, None, frozenset(values)
    if get_origin(annotation) is list and not optional:
        (item,) = get_args(annotation) or (None,)
        if isinstance(item, type) and issubclass(item, WireModel):
            return _MODELS, False, None, item
        return None
    if isinstance(annotation, type) and issubclass(annotation, WireModel):
        return _MODEL, optional, None, annotation
    return None


def _after_of(probe: FieldInfo) -> Callable[[Any], Any] | None:
    funcs = [m.func for m in probe.metadata if isinstance(m, AfterValidator)]
    return cast("Callable[[Any], Any]", funcs[0]) if len(funcs) == 1 else None


def _nested(descriptor: Any, model: type[Any]) -> _Plan | None:
    # None for a recursive message type: validated.
    return _PLANS.nested((model, descriptor), lambda: _plan(model, descriptor, top=False))
