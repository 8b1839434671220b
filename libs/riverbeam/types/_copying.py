"""deep_copy: an independent copy of a wire model, without copy.deepcopy's generic machinery.

`model.model_copy(deep=True)` runs `copy.deepcopy` over the model's `__dict__`: a memo
dictionary, `__reduce_ex__` for every nested model, and a keep-alive list. For the records of
this library (models of strings, numbers, datetimes, lists and JSON-like dicts) that is most of
the cost of the in-memory store. `deep_copy` walks the same values directly: immutable
scalars are shared (as deepcopy shares them), lists, dicts, tuples and nested models are
copied, and anything else falls back to `copy.deepcopy`. The result is equal to the original
and shares no mutable value with it.
"""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import enum
import uuid
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from functools import cache, partial
from typing import Any, TypeVar, cast

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["copy_maker", "deep_copy", "field_defaults", "model_of_valid", "updated_copy"]

_M = TypeVar("_M", bound=BaseModel)
_set = object.__setattr__

_ATOMIC: frozenset[type] = frozenset(
    {
        str,
        int,
        float,
        bool,
        bytes,
        type(None),
        dt.datetime,
        dt.date,
        dt.time,
        dt.timedelta,
        dt.timezone,
        uuid.UUID,
        decimal.Decimal,
        complex,
        range,
    }
)


def deep_copy(model: _M) -> _M:
    """A copy of `model` that shares no mutable value with it (as model_copy(deep=True))."""
    return _copy_model(model)


def _copy_model(model: _M) -> _M:
    # What BaseModel.__copy__ does (a new instance with copies of __dict__, the fields set, the
    # extra and the private values), with the values copied deeply on the way.
    alloc, set_dict, set_fields, set_extra, set_private = _slots_of(type(model))
    new: _M = alloc(type(model))
    set_dict(new, {
        k: v if type(v) in _ATOMIC else _copy_value(v) for k, v in model.__dict__.items()
    })  # fmt: skip
    set_fields(new, set(model.__pydantic_fields_set__))
    extra = model.__pydantic_extra__
    set_extra(new, None if extra is None else _copy_value(extra))
    private = getattr(model, "__pydantic_private__", None)
    set_private(
        new,
        None if private is None else _copy_value(
            {k: v for k, v in private.items() if v is not PydanticUndefined}
        ),
    )  # fmt: skip
    return new


def field_defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """Every field's default in declaration order (the order of a validated model's
    __dict__), for a model_of_valid caller to fill in; None for a field with a
    default_factory, which the caller fills afresh."""
    return {
        name: None if info.default_factory is not None else info.default
        for name, info in cls.model_fields.items()
    }


def model_of_valid(
    cls: type[_M], values: dict[str, Any], fields_set: AbstractSet[str] | None = None
) -> _M:
    """The model of `cls` that `cls(**values)` validates, for values validation would keep as
    they are (the caller checks that), every field given: `values` becomes its __dict__.

    What a record read back from the database costs without pydantic's validation pass: the
    caller owns `values` (a fresh dict) and hands it over. `fields_set`: the fields the
    caller named (model_fields_set), when not all of them; the rest hold their defaults.
    """
    alloc, set_dict, set_fields, set_extra, set_private = _slots_of(cls)
    new: _M = alloc(cls)
    set_dict(new, values)
    set_fields(new, set(values) if fields_set is None else set(fields_set))
    set_extra(new, None)
    set_private(new, None)
    return new


def updated_copy(model: _M, update: Mapping[str, Any]) -> _M:
    """`model.model_copy(update=update)`: a shallow copy with `update`'s fields set (not
    validated), without model_copy's generic path (__copy__, copy.copy of each slot, then the
    update): ~1.2 us a Run instead of ~2.5.

    The same new model as model_copy's (its __dict__, fields set, extra and private values) for
    every model whose extra fields are not allowed, as every wire model's; a model that allows
    them goes to model_copy itself, which files unknown names as extra.
    """
    cls = type(model)
    if cls.model_config.get("extra") == "allow":
        return model.model_copy(update=update)
    alloc, set_dict, set_fields, set_extra, set_private = _slots_of(cls)
    new: _M = alloc(cls)
    values = model.__dict__.copy()
    values.update(update)
    set_dict(new, values)
    fields = set(model.__pydantic_fields_set__)
    fields.update(update)
    set_fields(new, fields)
    extra = model.__pydantic_extra__
    set_extra(new, None if extra is None else extra.copy())
    private = getattr(model, "__pydantic_private__", None)
    set_private(
        new,
        None if private is None else {
            k: v for k, v in private.items() if v is not PydanticUndefined
        },
    )  # fmt: skip
    return new


# How a model class's instances are made and filled: its allocator and the setters of the
# four values BaseModel keeps in slots (__dict__, the fields set, the extra, the private).
# The setters are the slot descriptors along the class's MRO, called directly: ~80 ns a value
# instead of object.__setattr__'s ~140. A class attribute that is no descriptor is passed over
# (RootModel sets `__pydantic_extra__ = None` on the class: object.__setattr__ stopped there
# and wrote the value into the copy's __dict__, which the original's __dict__ does not hold).
_Slots = tuple[
    Callable[[type[Any]], Any],
    Callable[[Any, Any], None],
    Callable[[Any, Any], None],
    Callable[[Any, Any], None],
    Callable[[Any, Any], None],
]
_SLOT_NAMES = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


@cache
def _slots_of(cls: type[BaseModel]) -> _Slots:
    def setter(name: str) -> Callable[[Any, Any], None]:
        for klass in cls.__mro__:
            found = klass.__dict__.get(name)
            if found is not None and hasattr(found, "__set__"):
                return cast("Callable[[Any, Any], None]", found.__set__)
        return partial(_set_named, name)

    alloc = object.__new__ if cls.__new__ is object.__new__ else cls.__new__
    dict_, fields, extra, private = (setter(name) for name in _SLOT_NAMES)
    return alloc, dict_, fields, extra, private


def _set_named(name: str, target: Any, value: Any) -> None:
    _set(target, name, value)


def _copy_value(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is list:
        return [_copy_value(v) for v in value]
    if kind is dict:
        return {k: _copy_value(v) for k, v in value.items()}
    if kind is tuple:
        return tuple(_copy_value(v) for v in value)
    if isinstance(value, BaseModel):
        return _copy_model(value)
    if isinstance(value, enum.Enum):
        return value
    return copy.deepcopy(value)


def copy_maker(model: _M) -> Callable[[], _M]:
    """A function whose every call returns a new deep copy of `model` (as deep_copy would).

    The maker reads `model` on each call and keeps nothing copied of its own: `model` must not
    change while the maker is used (hold it where nothing else reaches it). The copies share
    no mutable value with `model` or with each other.
    """
    make, part = _plan(model)
    maker: Callable[[], _M] = partial(make, part)
    return maker


# A plan is (make, part): make(part) is a new copy of the value planned. Plans are plain
# tuples and module functions (not closures): a held message's plan is ~500 bytes.
_Plan = tuple[Callable[[Any], Any], Any]


def _plan(value: Any) -> _Plan:
    kind = type(value)
    if kind in _ATOMIC or isinstance(value, enum.Enum):
        return _same, value
    if kind is list:
        if all(type(v) in _ATOMIC for v in value):
            return list.copy, value
        parts = tuple(_plan(v) for v in value)
        return (_make_one, parts[0]) if len(parts) == 1 else (_make_list, parts)
    if kind is dict:
        if all(type(v) in _ATOMIC for v in value.values()):
            return dict.copy, value
        return _make_dict, (value, _plans_of(value))
    if kind is tuple:
        return _make_tuple, tuple(_plan(v) for v in value)
    if isinstance(value, BaseModel):
        return _model_plan(value)
    return copy.deepcopy, value


def _plans_of(values: dict[Any, Any]) -> tuple[tuple[Any, Callable[[Any], Any], Any], ...]:
    """(key, make, part) for each value of `values` that is not shared as it is."""
    return tuple((k, *_plan(v)) for k, v in values.items() if type(v) not in _ATOMIC)


def _model_plan(model: BaseModel) -> _Plan:
    cls = type(model)
    base = model.__dict__
    extra = model.__pydantic_extra__
    private = getattr(model, "__pydantic_private__", None)
    lists: list[tuple[str, tuple[_Leaf, ...]]] = []
    others: list[tuple[Any, Callable[[Any], Any], Any]] = []
    for key, value in base.items():
        if type(value) in _ATOMIC:
            continue
        if type(value) is list and value and all(map(_is_leaf, value)):
            lists.append((key, tuple(_leaf(v) for v in value)))
        else:
            others.append((key, *_plan(value)))
    plain = (cls, _slots_of(cls), base, model.__pydantic_fields_set__, tuple(lists), tuple(others))
    if extra is None and private is None:
        return _make_model, plain
    kept = None if private is None else {
        k: v for k, v in private.items() if v is not PydanticUndefined
    }  # fmt: skip
    return _make_full_model, (
        plain,
        None if extra is None else _plan(extra),
        None if kept is None else _plan(kept),
    )


# A leaf: a model whose values are all shared as they are (no extra, no private values), such
# as a text ContentPart. A list of leaves (a message's content) is made inside the plan of the
# model that holds it, not by a call per leaf: (class, its slots, __dict__, fields set).
_Leaf = tuple[type[BaseModel], _Slots, dict[str, Any], set[str]]


def _is_leaf(value: Any) -> bool:
    return (
        isinstance(value, BaseModel)
        and value.__pydantic_extra__ is None
        and getattr(value, "__pydantic_private__", None) is None
        and all(type(v) in _ATOMIC for v in value.__dict__.values())
    )


def _leaf(model: BaseModel) -> _Leaf:
    cls = type(model)
    return cls, _slots_of(cls), model.__dict__, model.__pydantic_fields_set__


def _same(value: Any) -> Any:
    return value


def _make_one(plan: _Plan) -> list[Any]:
    make, part = plan
    return [make(part)]


def _make_list(plans: tuple[_Plan, ...]) -> list[Any]:
    return [make(part) for make, part in plans]


def _make_tuple(plans: tuple[_Plan, ...]) -> tuple[Any, ...]:
    return tuple(make(part) for make, part in plans)


def _make_dict(plan: tuple[dict[Any, Any], Any]) -> dict[Any, Any]:
    # A copy of the dict (its keys in their order) with every value that is not atomic made anew.
    base, plans = plan
    out = base.copy()
    for key, make, part in plans:
        out[key] = make(part)
    return out


def _make_model(plan: tuple[Any, ...]) -> Any:
    # What _copy_model does (no extra and no private values: most models), planned once, in
    # one call for the model and the leaves of its lists: a held message with a text part is
    # copied by this call alone.
    cls, (alloc, set_dict, set_fields, set_extra, set_private), base, fields_set, lists, others = (
        plan
    )
    values = base.copy()
    for key, leaves in lists:
        made_leaves = []
        for leaf_cls, (new, leaf_dict, leaf_fields, leaf_extra, leaf_private), v, f in leaves:
            leaf = new(leaf_cls)
            leaf_dict(leaf, v.copy())
            leaf_fields(leaf, set(f))
            leaf_extra(leaf, None)
            leaf_private(leaf, None)
            made_leaves.append(leaf)
        values[key] = made_leaves
    for key, make, part in others:
        values[key] = make(part)
    made = alloc(cls)
    set_dict(made, values)
    set_fields(made, set(fields_set))
    set_extra(made, None)
    set_private(made, None)
    return made


def _make_full_model(plan: tuple[Any, _Plan | None, _Plan | None]) -> Any:
    plain, extra, private = plan
    made = _make_model(plain)
    *_, set_extra, set_private = plain[1]
    if extra is not None:
        set_extra(made, extra[0](extra[1]))
    if private is not None:
        set_private(made, private[0](private[1]))
    return made
