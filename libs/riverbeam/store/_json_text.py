"""A record's JSON text for a jsonb parameter, made from its attributes (types/_convert_json).

_rows.dump writes a model with `model_dump_json(exclude_none=True)`, and WireModel's wrap
serializer runs in Python for every nested model: a finish step's result, its usage and its
message's content cost ~190k instructions a step (callgrind). The plans of
types/_convert_json.py write the compact JSON text of `model_dump(mode="json")` from the
attributes, for the values they know JSON mode keeps as they are (the text `to_json()` gives):
the same JSON values as `model_dump_json(exclude_none=True)`, key for key and number for number
(a float's digits and scale; only an exponent's spelling may differ, 1e-05 for 1e-5, which
numeric reads alike), but for a None held by an `_always` field (written by the plan, left out
by exclude_none). A class with such a field, itself or in a model it holds, is left to
pydantic, and so is any value its plan doubts, a circular or too deep free-form value, and a
text holding a lone surrogate, as pydantic refuses them.
tests/unit/store/test_store_pg_json_text.py compares both over generated values.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from riverbeam.types._base import WireModel
from riverbeam.types._convert_json import _LOCK, _Doubt, _plan

__all__ = ["model_json"]

_Dump = Callable[[Any], str]
# model class -> its plan, or None: pydantic writes it.
_DUMPS: dict[type[Any], _Dump | None] = {}


def model_json(value: BaseModel) -> str | None:
    """`value.model_dump_json(exclude_none=True)`'s JSON values as compact text, or None when
    they are left to pydantic (see the module docstring)."""
    cls = type(value)
    dump = _DUMPS[cls] if cls in _DUMPS else _dump_of(cls)
    if dump is None:
        return None
    try:
        text = dump(value)
    except (_Doubt, KeyError, RecursionError, ValueError):
        # KeyError: a field missing from __dict__ (deleted); RecursionError, ValueError: a
        # free-form value circular or too deep for the plan (pydantic then refuses it as before)
        return None
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:  # a lone surrogate: pydantic's refusal, the old path's
            return None
    return text


def _dump_of(cls: type[Any]) -> _Dump | None:
    with _LOCK:
        dump = _plan(cls) if _writes_no_none(cls) else None
    _DUMPS[cls] = dump
    return dump


def _writes_no_none(cls: type[Any]) -> bool:
    """Whether no `_always` field of cls, nor of any wire model its fields hold, may be None."""
    if not (isinstance(cls, type) and issubclass(cls, WireModel)):
        return False
    seen: set[type[Any]] = set()
    todo = [cls]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():
            if name in model._always and _may_be_none(info.annotation):
                return False
            todo += _models_in(info.annotation)
    return True


def _may_be_none(annotation: Any) -> bool:
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _may_be_none(get_args(annotation)[0])
    if origin is Literal:
        return None in get_args(annotation)
    if origin in (Union, types.UnionType):
        return any(_may_be_none(arm) for arm in get_args(annotation))
    return False


def _models_in(annotation: Any) -> Iterator[type[WireModel]]:
    if isinstance(annotation, type) and issubclass(annotation, WireModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _models_in(arg)
