"""_rows.dump and dump_content through _json_text write the JSON values pydantic's serializer
wrote (numbers to the digit and scale, keys in order), over generated values of every wire
type and values no validation makes; what the plans cannot write is left to the old path."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from riverbeam.store import _rows
from riverbeam.store._json_text import encode, model_json
from riverbeam.types import (
    WIRE_TYPES,
    AgentResult,
    ContentPart,
    TokenUsage,
    TurnConfig,
    WireModel,
)
from riverbeam.types._base import _COMPACT_JSON
from tests.unit.store.test_store_rows_dump import exact, reference_content, reference_dump
from tests.unit.types._wire_values import VALUES

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _old_dump(model: BaseModel) -> str:
    """What _rows.dump wrote for a model before _json_text (pydantic's serializer)."""
    return model.model_dump_json(exclude_none=True)


def _same_as_before(model: BaseModel) -> None:
    new = _rows.dump(model)
    assert new is not None
    assert exact(new) == exact(reference_dump(model))
    assert exact(new) == exact(_old_dump(model))
    assert list(exact(new)) == list(exact(_old_dump(model)))  # keys in the same order


@pytest.mark.parametrize("name", sorted(WIRE_TYPES))
def test_every_wire_type_dumps_to_the_json_pydantic_wrote(name: str) -> None:
    @_SETTINGS
    @given(VALUES[name])
    def check(value: WireModel) -> None:
        _same_as_before(value)

    check()


@_SETTINGS
@given(st.lists(VALUES["ContentPart"], max_size=4))
def test_content_dumps_to_the_json_pydantic_wrote(parts: list[ContentPart]) -> None:
    assert exact(_rows.dump_content(parts)) == exact(reference_content(parts))


def test_the_hot_records_have_plans() -> None:
    usage = TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3)
    result = AgentResult(
        content=[ContentPart.of_text("hi")], agent_name="a", token_usage=usage, latency_ms=1.5
    )
    for model in (usage, result, ContentPart.of_text("x"), TurnConfig()):
        assert model_json(model) is not None
        _same_as_before(model)


# Values an assignment can make (validation is off for assignments): each one either takes the
# old path or gives the same JSON values.
_ODD: list[Any] = [None, 1, 1.0, True, "", "\x00", "\ud800", math.inf, math.nan, -0.0, (1, 2), {}]


@pytest.mark.parametrize("odd", _ODD, ids=repr)
@pytest.mark.parametrize(
    "field", ["agent_name", "model_used", "latency_ms", "interrupted", "output", "metadata"]
)
def test_an_odd_value_takes_the_old_path_or_dumps_the_same(field: str, odd: Any) -> None:
    result = AgentResult(content=[ContentPart.of_text("hi")], agent_name="a")
    object.__setattr__(result, field, odd)
    try:
        before = _old_dump(result)
    except Exception:
        before = None
    try:
        new = _rows.dump(result)
    except Exception:
        new = None
    if before is None:
        # pydantic refused: dump took the json.dumps path, as before
        assert model_json(result) is None
        return
    assert new is not None
    assert exact(new) == exact(before)


def test_a_none_in_an_always_field_is_left_to_pydantic() -> None:
    # `content` is always written; exclude_none leaves a None out where the plan writes it.
    result = AgentResult(content=[], agent_name="a")
    object.__setattr__(result, "content", None)
    assert model_json(result) is None or "content" not in exact(model_json(result) or "{}")


def test_a_lone_surrogate_takes_the_old_path() -> None:
    part = ContentPart.of_text("\ud800")
    assert model_json(part) is None
    assert _rows.dump_content([part]) == reference_content([part])


def test_a_subclass_dumps_the_same() -> None:
    class Usage(TokenUsage):
        pass

    _same_as_before(Usage(prompt_tokens=1))
    # Held where the field is typed TokenUsage: the plan doubts it, pydantic writes it.
    result = AgentResult(content=[], agent_name="a", token_usage=Usage(prompt_tokens=2))
    assert model_json(result) is None
    _same_as_before(result)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@_SETTINGS
@given(st.dictionaries(st.text(), _JSON, max_size=6))
def test_encode_writes_the_text_of_the_compact_encoder(data: dict[str, Any]) -> None:
    assert encode(data) == _COMPACT_JSON.encode(data)


def test_encode_refuses_what_the_compact_encoder_refuses() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"d": deep}
    for bad in ({"x": object()}, looped, deep, {"n": math.nan, "x": {1}}):
        with pytest.raises(Exception) as expected:
            _COMPACT_JSON.encode(bad)
        with pytest.raises(expected.type, match=re.escape(str(expected.value))):
            encode(bad)
    assert encode({"ok": 1}) == '{"ok":1}'  # a refusal leaves nothing behind
