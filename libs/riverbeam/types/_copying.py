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
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["copy_maker", "deep_copy"]

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
    cls = type(model)
    new = cls.__new__(cls)
    _set(new, "__dict__", {
        k: v if type(v) in _ATOMIC else _copy_value(v) for k, v in model.__dict__.items()
    })  # fmt: skip
    _set(new, "__pydantic_fields_set__", set(model.__pydantic_fields_set__))
    extra = model.__pydantic_extra__
    _set(new, "__pydantic_extra__", None if extra is None else _copy_value(extra))
    private = getattr(model, "__pydantic_private__", None)
    _set(
        new,
        "__pydantic_private__",
        None if private is None else _copy_value(
            {k: v for k, v in private.items() if v is not PydanticUndefined}
        ),
    )  # fmt: skip
    return new


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
    made: Callable[[], _M] = _maker(model)
    return made


def _maker(value: Any) -> Callable[[], Any]:
    kind = type(value)
    if kind in _ATOMIC or isinstance(value, enum.Enum):
        return lambda: value
    if kind is list:
        if all(type(v) in _ATOMIC for v in value):
            copy_list: Callable[[], list[Any]] = value.copy
            return copy_list
        items = [_maker(v) for v in value]
        if len(items) == 1:  # a message's one content part, mostly
            (only,) = items
            return lambda: [only()]
        return lambda: [make() for make in items]
    if kind is dict:
        if all(type(v) in _ATOMIC for v in value.values()):
            copy_dict: Callable[[], dict[Any, Any]] = value.copy
            return copy_dict
        return _filled_copy(value, _makers_of(value))
    if kind is tuple:
        parts = [_maker(v) for v in value]
        return lambda: tuple(make() for make in parts)
    if isinstance(value, BaseModel):
        return _model_maker(value)
    return lambda: copy.deepcopy(value)


def _makers_of(values: dict[Any, Any]) -> tuple[tuple[Any, Callable[[], Any]], ...]:
    """The makers of the values of `values` that are not shared as they are."""
    return tuple((k, _maker(v)) for k, v in values.items() if type(v) not in _ATOMIC)


def _filled_copy(
    base: dict[Any, Any], makers: tuple[tuple[Any, Callable[[], Any]], ...]
) -> Callable[[], dict[Any, Any]]:
    # A copy of base (its keys in their order) with every value that is not atomic made anew.
    def make() -> dict[Any, Any]:
        out = base.copy()
        for key, make_value in makers:
            out[key] = make_value()
        return out

    return make


def _model_maker(model: BaseModel) -> Callable[[], Any]:
    # What _copy_model does, with the walk over the values done once. The __dict__ is copied
    # (its keys in their order) and every value in it that is not atomic made anew.
    cls = type(model)
    new = cls.__new__
    copy_values = model.__dict__.copy
    makers = _makers_of(model.__dict__)
    fields_set = model.__pydantic_fields_set__
    extra = model.__pydantic_extra__
    private = getattr(model, "__pydantic_private__", None)
    make_extra = None if extra is None else _maker(extra)
    make_private = None if private is None else _maker(
        {k: v for k, v in private.items() if v is not PydanticUndefined}
    )  # fmt: skip

    def make() -> Any:
        made = new(cls)
        values = copy_values()
        for key, make_value in makers:
            values[key] = make_value()
        _set(made, "__dict__", values)
        _set(made, "__pydantic_fields_set__", set(fields_set))
        _set(made, "__pydantic_extra__", None if make_extra is None else make_extra())
        _set(made, "__pydantic_private__", None if make_private is None else make_private())
        return made

    def make_plain() -> Any:  # no extra and no private values: most models
        made = new(cls)
        values = copy_values()
        for key, make_value in makers:
            values[key] = make_value()
        _set(made, "__dict__", values)
        _set(made, "__pydantic_fields_set__", set(fields_set))
        _set(made, "__pydantic_extra__", None)
        _set(made, "__pydantic_private__", None)
        return made

    return make_plain if make_extra is None and make_private is None else make
