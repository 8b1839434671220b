"""_rows.dump writes models with pydantic's JSON serializer: the same JSON values, numbers to
the digit and scale, as the json.dumps(model_dump(mode="json")) it replaced, so the same jsonb."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from riverbeam.store import _rows
from riverbeam.types import ContentPart, TurnConfig
from tests.support.jsonb_samples import CONTENT_SAMPLES, MODEL_SAMPLES


def reference_dump(model: BaseModel) -> str:
    """What _rows.dump wrote for a model before."""
    return json.dumps(model.model_dump(mode="json", exclude_none=True))


def reference_content(parts: list[ContentPart]) -> str:
    return json.dumps(
        [p.model_dump(mode="json", exclude_none=True) for p in parts], ensure_ascii=False
    )


def exact(text: str) -> Any:
    """The JSON value of text with each number as its digits and scale (what numeric keeps)."""

    def number(raw: str) -> tuple[Decimal, int]:
        d = Decimal(raw)
        exponent = d.as_tuple().exponent
        assert isinstance(exponent, int)
        return d, max(0, -exponent)

    return json.loads(text, parse_float=number, parse_int=number)


@pytest.mark.parametrize("model", MODEL_SAMPLES, ids=lambda m: type(m).__name__)
def test_a_model_dumps_to_the_json_it_dumped_before(model: BaseModel) -> None:
    new = _rows.dump(model)
    assert new is not None
    assert exact(new) == exact(reference_dump(model))
    # Key order too (jsonb does not keep it, but a reader of the text would see it).
    assert list(json.loads(new)) == list(json.loads(reference_dump(model)))


@pytest.mark.parametrize("parts", CONTENT_SAMPLES, ids=lambda p: f"{len(p)} parts")
def test_content_dumps_to_the_json_it_dumped_before(parts: list[ContentPart]) -> None:
    assert exact(_rows.dump_content(parts)) == exact(reference_content(parts))


def test_what_the_json_serializer_cannot_write_takes_the_old_path() -> None:
    # A lone surrogate: pydantic refuses it, json.dumps escapes it (and PostgreSQL refuses
    # the escape, as before).
    part = ContentPart.of_text("\ud800")
    assert _rows.dump_content([part]) == reference_content([part])
    model = TurnConfig(prepend_instructions="\ud800")
    assert _rows.dump(model) == reference_dump(model)


def test_plain_values_and_none_are_as_before() -> None:
    assert _rows.dump(None) is None
    value = {"é": [1.5, 1e-05, None], "n": 10**30}
    assert _rows.dump(value) == json.dumps(value, ensure_ascii=False)
