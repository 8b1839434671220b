"""A record's JSON text for a jsonb parameter, made from its attributes (types/_convert_json).

_rows.dump writes a model with `model_dump_json(exclude_none=True)`, and WireModel's wrap
serializer runs in Python for every nested model: a finish step's result, its usage and its
message's content cost ~190k instructions a step (callgrind). The plans of
types/_convert_json.py write the compact JSON text of `model_dump(mode="json")` from the
attributes, for the values they know JSON mode keeps as they are (the text `to_json()` gives):
the same JSON values as `model_dump_json(exclude_none=True)`, key for key and number for number
(a float's digits and scale; only an exponent's spelling may differ, 1e-05 for 1e-5, which
numeric reads alike), but for a None held by an `_always` field (written by the plan, left out
by exclude_none). A class whose plan may write such a null is left to pydantic, and so is any
value its plan doubts, a circular or too deep free-form value, and a text holding a lone
surrogate, as pydantic refuses them.
tests/unit/store/test_store_pg_json_text.py compares both over generated values.
"""

from __future__ import annotations

from pydantic import BaseModel

from riverbeam.types._convert_json import planned_text

__all__ = ["model_json"]


def model_json(value: BaseModel) -> str | None:
    """`value.model_dump_json(exclude_none=True)`'s JSON values as compact text, or None when
    they are left to pydantic (see the module docstring)."""
    try:
        text = planned_text(value, without_nulls=True)
    except (RecursionError, ValueError):
        # A free-form value circular or too deep for the plan (pydantic then refuses it as
        # before).
        return None
    if text is not None and not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:  # a lone surrogate: pydantic's refusal, the old path's
            return None
    return text
