"""to_json_text writes exactly the text to_json() writes, for every wire type and odd values."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from _wire_values import VALUES, json_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, computed_field, field_serializer

from riverbeam.types import (
    WIRE_TYPES,
    AgentMessage,
    AgentResult,
    ContentPart,
    StreamChunk,
    TokenUsage,
    WireModel,
)
from riverbeam.types._convert_json import _PLANS, to_json_text

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same(value: WireModel) -> None:
    assert to_json_text(value) == value.to_json()


@pytest.mark.parametrize("name", sorted(WIRE_TYPES))
def test_every_wire_type_has_a_plan_and_writes_the_same_text(name: str) -> None:
    @_SETTINGS
    @given(VALUES[name])
    def check(value: WireModel) -> None:
        _same(value)

    check()
    assert _PLANS.get(WIRE_TYPES[name]) is not None


# Values that validation would not make but an assignment (validate_assignment is off) can.
_ODD: list[Any] = [
    None,
    {},
    [],
    (),
    (1, 2),
    1,
    True,
    1.5,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "x",
    b"bytes",
    {"k": (1,)},
    {"k": math.inf},
    {1: "int key"},
    {"nested": {"deep": [1, "two", None, {"x": 1.25}]}},
    [math.nan],
    datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
    datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2024, 5, 6, 7, 8, 9),
    ContentPart(type="text", text="in a free-form field"),
    TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3),
]


class _Part(ContentPart):
    pass


class _Text(str):
    pass


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(WIRE_TYPES)),
    st.data(),
)
def test_assigned_odd_values_write_what_to_json_writes(name: str, data: st.DataObject) -> None:
    value = data.draw(VALUES[name])
    fields = list(type(value).model_fields)
    for _ in range(data.draw(st.integers(1, 3))):
        field = data.draw(st.sampled_from(fields))
        odd = data.draw(
            st.sampled_from(_ODD)
            | json_values
            | st.just([_Part(type="text", text="a subclass")])
            | st.just(_Text("a str subclass"))
        )
        object.__setattr__(value, field, odd)
    try:
        expected = value.to_json()
    except Exception as exc:  # to_json refuses it: so must to_json_text, alike
        with pytest.raises(type(exc)):
            to_json_text(value)
        return
    assert to_json_text(value) == expected


def test_a_streamed_runs_frames_write_the_same_text() -> None:
    stamp = datetime(2026, 12, 3, 6, 30, 0, 120000, tzinfo=UTC)
    part = ContentPart.of_text("Echo: hi")
    chunk = StreamChunk(
        type="chunk",
        agent_name="assistant",
        session_id="s",
        run_id="r",
        message_id="m",
        timestamp=stamp,
        seq=1,
        request_id="q",
        data=AgentMessage(
            role="ai", id="m", content=[part], is_delta=True, phase="final", timestamp=stamp
        ),
    )
    done = StreamChunk(
        type="done",
        seq=2,
        timestamp=stamp,
        result=AgentResult(
            content=[part],
            agent_name="assistant",
            token_usage=TokenUsage(),
            latency_ms=0.25,
            metadata={"k": [1, 2.5, None]},
        ),
    )
    for frame in (chunk, done):
        _same(frame)


class _Serialized(WireModel):
    text: str = "a"

    @field_serializer("text")
    def _upper(self, value: str) -> str:
        return value.upper()


class _Computed(WireModel):
    text: str = "a"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def twice(self) -> str:
        return self.text * 2


class _Excluded(WireModel):
    text: str = "a"
    hidden: str = Field(default="h", exclude=True)


class _Other(BaseModel):
    text: str = "a"


class _HoldsOther(WireModel):
    other: _Other = Field(default_factory=_Other)


@pytest.mark.parametrize("cls", [_Serialized, _Computed, _Excluded, _HoldsOther])
def test_a_model_the_plans_do_not_know_is_written_by_to_json(cls: type[WireModel]) -> None:
    value = cls()
    _same(value)
    assert _PLANS[cls] is None


def test_a_field_deleted_from_the_model_is_left_to_to_json() -> None:
    value = ContentPart.of_text("x")
    del value.__dict__["url"]
    try:
        expected: object = value.to_json()
    except Exception as exc:
        with pytest.raises(type(exc)):
            to_json_text(value)
    else:
        assert to_json_text(value) == expected
