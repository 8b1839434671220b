"""text_result builds exactly the AgentResult validation builds, and refuses what it refuses."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from riverbeam.agents._plain_result import text_result
from riverbeam.types import AgentResult, ContentPart


class _Str(str):
    pass


class _Float(float):
    pass


_texts = st.text(max_size=20)
_ids = st.none() | _texts

# Values validation keeps as they are: the direct path's.
_PLAIN: dict[str, st.SearchStrategy[Any]] = {
    "text": _texts,
    "agent_name": st.text(min_size=1, max_size=20),
    "session_id": _ids,
    "request_id": _ids,
    "interaction_id": _ids,
    "run_id": _ids,
    "latency_ms": st.floats(allow_nan=False, allow_infinity=False),
}

# Anything else: validation converts it, or refuses it.
_ODD = st.sampled_from(
    [
        None,
        "",
        _Str("a str subclass"),
        1,
        0,
        True,
        -0.0,
        _Float(1.5),
        math.inf,
        -math.inf,
        math.nan,
        b"bytes",
        [],
        {},
        ContentPart.of_text("a part"),
    ]
)


@st.composite
def plain_values(draw: st.DrawFn) -> dict[str, Any]:
    return {key: draw(strategy) for key, strategy in _PLAIN.items()}


@st.composite
def any_values(draw: st.DrawFn) -> dict[str, Any]:
    values = draw(plain_values())
    # One to three values that validation may convert or refuse, among plain ones.
    for key in draw(st.lists(st.sampled_from(sorted(_PLAIN)), min_size=1, max_size=3, unique=True)):
        values[key] = draw(_ODD)
    return values


def _validated(values: dict[str, Any]) -> AgentResult:
    fields = dict(values)
    text = fields.pop("text")
    return AgentResult(content=[ContentPart.of_text(text)], **fields)


def _fast(values: dict[str, Any]) -> AgentResult:
    fields = dict(values)
    return text_result(fields.pop("text"), **fields)


def _built(values: dict[str, Any], build: Any) -> tuple[str, Any]:
    try:
        return "ok", build(values)
    except ValidationError as exc:
        return "refused", exc.errors(include_url=False)


def _assert_same_model(fast: BaseModel, slow: BaseModel) -> None:
    assert type(fast) is type(slow)
    assert list(fast.__dict__) == list(slow.__dict__)
    assert fast.__dict__ == slow.__dict__
    assert [type(v) for v in fast.__dict__.values()] == [type(v) for v in slow.__dict__.values()]
    assert fast.__pydantic_fields_set__ == slow.__pydantic_fields_set__
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_private__ == slow.__pydantic_private__


def _assert_same(fast: AgentResult, slow: AgentResult) -> None:
    _assert_same_model(fast, slow)
    assert len(fast.content) == len(slow.content) == 1
    _assert_same_model(fast.content[0], slow.content[0])
    assert fast == slow
    assert fast.to_json() == slow.to_json()
    assert fast.to_proto() == slow.to_proto()
    # No list is shared between two results (the defaults are fresh lists).
    other = _fast({k: v for k, v in vars(fast).items() if k in _PLAIN} | {"text": "other"})
    for name in ("content", "tool_calls", "action_required"):
        assert getattr(fast, name) is not getattr(other, name)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_values())
def test_plain_values_build_what_validation_builds(values: dict[str, Any]) -> None:
    _assert_same(_fast(values), _validated(values))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_values())
def test_any_values_give_what_validation_gives(values: dict[str, Any]) -> None:
    fast_kind, fast = _built(values, _fast)
    slow_kind, slow = _built(values, _validated)
    assert fast_kind == slow_kind
    if fast_kind == "ok":
        _assert_same(fast, slow)
    else:
        assert fast == slow  # the same errors, from the same validation
