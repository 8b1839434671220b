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
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["deep_copy"]

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
