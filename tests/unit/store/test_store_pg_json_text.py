"""_rows.dump and dump_content through _json_text write the JSON values pydantic's serializer
wrote (numbers to the digit and scale, keys in order), over generated values of every wire
type and values no validation makes; what the plans cannot write is left to the old path."""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from pydantic_core import PydanticSerializationError

from riverbeam.store import _rows
from riverbeam.store._json_text import model_json
from riverbeam.types import (
    WIRE_TYPES,
    AgentResult,
    ContentPart,
    TokenUsage,
    TurnConfig,
    WireModel,
)
from riverbeam.types._convert_json import to_json_text
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


class _Noted(WireModel):
    # An `_always` field that may be None: its plan writes `"note":null`, which exclude_none
    # leaves out.
    _always: ClassVar[frozenset[str]] = frozenset({"note"})
    note: str | None = None


class _HoldsNoted(WireModel):
    noted: list[_Noted] = Field(default_factory=list)


def test_a_plan_that_may_write_a_null_is_left_to_pydantic() -> None:
    noted = _Noted()
    assert to_json_text(noted) == '{"note":null}'  # the plan's text, as to_json() writes it
    assert model_json(noted) is None
    assert _rows.dump(noted) == noted.model_dump_json(exclude_none=True) == "{}"
    # So is a class holding such a model, whatever the values it holds.
    holder = _HoldsNoted(noted=[_Noted(note="n")])
    assert model_json(holder) is None
    _same_as_before(holder)


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
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e15, 1e16, 1e-05, 1e-07, 5e-324, -0.0, 123456789.125, 2**70])
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@_SETTINGS
@given(_JSON, st.dictionaries(st.text(), _JSON, max_size=4))
def test_free_form_json_dumps_as_pydantic_wrote_it(output: Any, metadata: dict[str, Any]) -> None:
    result = AgentResult(content=[], agent_name="a", output=output, metadata=metadata or None)
    _same_as_before(result)


def test_what_to_json_refuses_is_left_to_pydantic() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"d": deep}
    for output in (looped, deep, {"x": "\ud800"}):
        result = AgentResult(content=[], agent_name="a")
        object.__setattr__(result, "output", output)
        assert model_json(result) is None
        assert _outcome(_rows.dump, result) == _outcome(_old_rows_dump, result)


def _old_rows_dump(model: BaseModel) -> str:
    """_rows.dump of a model before _json_text."""
    try:
        return model.model_dump_json(exclude_none=True)
    except PydanticSerializationError:
        return json.dumps(model.model_dump(mode="json", exclude_none=True))


def _outcome(dump: Any, model: BaseModel) -> Any:
    try:
        return dump(model)
    except Exception as exc:
        return type(exc), str(exc)
