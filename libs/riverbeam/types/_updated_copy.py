"""updated_copy: `model.model_copy(update=...)` without pydantic's generic copy calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from riverbeam.types._copying import _slots_of

__all__ = ["updated_copy"]

_M = TypeVar("_M", bound=BaseModel)


def updated_copy(model: _M, update: Mapping[str, Any]) -> _M:
    """What `model.model_copy(update=update)` returns: a shallow copy of `model` with the
    values of `update` set (not validated) and their names added to the fields set.

    BaseModel.__copy__ runs `copy.copy` on each of the four values a model keeps; these are a
    dict, a set and None here, copied directly (~1.2 us less an invoke's sanitising). A model
    that allows extra values is left to model_copy (an update may go to its extra).
    """
    cls = type(model)
    if cls.model_config.get("extra") == "allow":
        return model.model_copy(update=update)
    alloc, set_dict, set_fields, set_extra, set_private = _slots_of(cls)
    new: _M = alloc(cls)
    values = model.__dict__.copy()
    values.update(update)
    set_dict(new, values)
    extra = model.__pydantic_extra__
    set_extra(new, None if extra is None else extra.copy())
    fields = set(model.__pydantic_fields_set__)
    fields.update(update.keys())
    set_fields(new, fields)
    private = getattr(model, "__pydantic_private__", None)
    set_private(
        new,
        None if private is None else {
            k: v for k, v in private.items() if v is not PydanticUndefined
        },
    )  # fmt: skip
    return new
