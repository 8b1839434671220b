"""protobuf message -> the model itself, where validating the dict would change nothing.

from_proto reads a message into a dict (_convert_from) and validates it. For the records the
services send each other (a run, a session, a message) the validation only confirms what the
fields' protobuf types already say: a string is a str, an int32 is in range, a Timestamp to the
microsecond is the aware UTC datetime _convert_from makes of it. Building the model from the
message's fields skips the dict and pydantic: 0.6 to 0.75 of the cost of from_proto for those
records. Each plan runs as one generated function (_convert_build_gen), its fields' reads and
checks written out in order.

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
from typing import TYPE_CHECKING, Any, Literal, Union, cast, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MinLen
from google.protobuf.descriptor import FieldDescriptor as _FD
from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from riverbeam.types import _convert_build_gen as gen
from riverbeam.types import _convert_from as _from
from riverbeam.types._convert import UNBUILT, Fallback, PlanCache
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


# (model, message descriptor) -> the plan's generated function (_convert_build_gen), or None.
_PLANS: PlanCache[gen.Builder] = PlanCache()


def build(cls: type[WireModel], msg: Any) -> Any | None:
    """The model cls validates from msg, built without validation, or None: validate then."""
    descriptor = getattr(msg, "DESCRIPTOR", None)
    if descriptor is None:
        return None
    key = (cls, descriptor)
    run = _PLANS.made.get(key, UNBUILT)
    if run is UNBUILT:
        run = _PLANS.top(key, lambda: _plan(cls, descriptor, top=True))
    if run is None:
        return None
    try:
        return run(msg)
    except Exception:  # any doubt: the dict is validated, and its errors raised
        return None


# ---- checks: what validation does with a field's value ----------------------------------------


def _number(is_float: bool, bounds: tuple[tuple[int, Any], ...]) -> gen.Check | None:
    if not is_float and not bounds:
        return None  # an int32 or a bool is the int or bool validation gives back
    return gen.Check(gen.NUMBER, (is_float, bounds))


def _limits(metadata: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """(op, limit) of each annotated_types bound."""
    out: list[tuple[int, Any]] = []
    for bound in metadata:
        if isinstance(bound, Gt):
            out.append((gen.GT, bound.gt))
        elif isinstance(bound, Ge):
            out.append((gen.GE, bound.ge))
        elif isinstance(bound, Lt):
            out.append((gen.LT, bound.lt))
        else:
            out.append((gen.LE, bound.le))
    return tuple(out)


# ---- plans ------------------------------------------------------------------------------------


def _plan(cls: type[Any], descriptor: Any, *, top: bool) -> gen.Builder | None:
    """How to build cls from a message of descriptor, or None when it is not plainly valid."""
    if not _plain_model(cls):
        return None
    reading = _from._plan(descriptor, cls, top=top)
    if reading is None:
        return None
    steps = {step.name: step for step in reading.steps}
    if set(steps) - set(cls.model_fields):
        return None  # a message field the model lacks: validation would refuse a set one
    fields: list[gen.Field] = []
    for name, info in cls.model_fields.items():
        if not _plain_default(info):
            return None
        step = steps.get(name)
        proto: Any = None
        read: int | None = None
        check: gen.Check | None = None
        unset: tuple[int, Any] = (gen.UNSET_ABSENT, None)
        if step is not None:
            proto = descriptor.fields_by_name[name]
            found = _converter(step.kind, step.arg, info, proto)
            if found is None:
                return None
            read, (check, unset) = step.kind, found
        elif info.is_required():
            return None
        how, value = unset
        if how == gen.UNSET_ABSENT and info.is_required():
            how = gen.UNSET_REFUSED
        factory = cast("Callable[[], Any] | None", info.default_factory)
        fields.append(gen.Field(name, read, proto, check, (how, value), info.default, factory))
    slots = _slots_of(cast("type[BaseModel]", cls))
    return gen.compiled(cls, slots, tuple(fields), _listed(descriptor))


LISTED: bool | None = None  # measuring, testing: every new plan reads one way (else _listed)

# Messages that usually arrive with most fields unset: a getattr each (and a HasField for each
# optional one) costs more than one ListFields, whose cost goes with the fields set. Callgrind,
# instructions per from_proto (ListFields / a getattr each): an echo's InvokeRequest (4 of 15
# fields set) 68.3k / 75.7k, a text ContentPart (2 of 7) 20.9k / 22.0k; but a running Run (11
# of 20) 57.8k / 51.4k and an echo's AgentResult (9 of 15) 77.5k / 66.4k. Both ways build the
# same model (tests/unit/types/test_types_convert_build.py).
_SPARSE = frozenset({"riverbeam.v1.InvokeRequest", "riverbeam.v1.ContentPart"})


def _listed(descriptor: Any) -> bool:
    """Whether a plan finds the set fields with ListFields rather than a getattr each."""
    if LISTED is not None:
        return LISTED
    return descriptor.full_name in _SPARSE


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
) -> tuple[gen.Check | None, tuple[int, Any]] | None:
    """The check of a model field from the message field _convert_from reads with kind (None:
    the value as read), and what an unset one gives (gen.UNSET_*, value), or None."""
    shape = _shape(info)
    if shape is None:
        return None
    check, _, after, extra = shape
    proto_type = proto.type
    absent = (gen.UNSET_ABSENT, None)
    if check in (_STR, _LITERAL):
        literal = extra if check == _LITERAL else None
        if kind == _from._ENUM:
            if after is not None:
                return None
            labels = gen.Check(gen.ENUM, (arg, literal))
            return labels, _unset(labels, 0, labels=arg)
        if kind in (_from._STR, _from._OPT) and proto_type == _FD.TYPE_STRING:
            nonempty = check == _STR and bool(extra) and kind == _from._OPT
            if not nonempty and literal is None and after is None:
                return None, absent
            return gen.Check(gen.STRING, (nonempty, literal, after)), absent  # unset: absent
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
        return number, _unset(number, proto.default_value)
    if check == _TIME and kind == _from._TIME:
        return gen.Check(gen.TIME, ()), absent
    if check in (_JSON, _ANY) and kind == _from._STRUCT:
        return gen.Check(gen.STRUCT, (after,)), absent
    if check == _ANY and kind == _from._VALUE:
        return gen.Check(gen.ANY_VALUE, ()), absent
    if check == _STRS and kind == _from._STRS:
        return gen.Check(gen.STRS, ()), (gen.UNSET_FRESH, None)
    if check == _MODEL and kind == _from._MSG:
        return gen.Check(gen.MESSAGE, (_nested(proto.message_type, extra),)), absent
    if check == _MODELS and kind == _from._MSGS:
        nested = _nested(proto.message_type, extra)
        return gen.Check(gen.MESSAGES, (nested,)), (gen.UNSET_FRESH, None)
    return None


def _unset(
    check: gen.Check | None, default: Any, labels: dict[int, Any] | None = None
) -> tuple[int, Any]:
    """What a field without presence gives when unset: its printed default as checked."""
    if labels is not None and labels.get(0, 0) is _from._POP:
        return gen.UNSET_ABSENT, None  # ..._UNSPECIFIED: left out of the dict
    try:
        return gen.UNSET_VALUE, default if check is None else gen.converter(check)(default)
    except Fallback:
        return gen.UNSET_REFUSED, None


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


def _nested(descriptor: Any, model: type[Any]) -> gen.Builder | None:
    # None for a recursive message type: validated.
    return _PLANS.nested((model, descriptor), lambda: _plan(model, descriptor, top=False))
