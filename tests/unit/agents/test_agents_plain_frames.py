"""FrameFactory.chunk and .done (built directly by _plain_frames where values are plain) make
exactly the frames its validating builds make, and refuse alike."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from riverbeam.agents import _frames
from riverbeam.agents._frames import FrameFactory
from riverbeam.types import AgentResult, ContentPart, StreamChunk

_SETTINGS = settings(
    max_examples=800,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class _Str(str):
    pass


class _Result(AgentResult):
    pass


_texts = st.text(max_size=20)
_ids = st.none() | _texts
_PLAIN: dict[str, st.SearchStrategy[Any]] = {
    "agent_name": _texts,
    "agent_id": _texts,
    "session_id": _ids,
    "run_id": _ids,
    "interaction_id": _ids,
    "message_id": _texts,
}
_ODD: st.SearchStrategy[Any] = st.sampled_from(
    [None, "", _Str("a str subclass"), 1, True, 1.5, b"bytes", [], {}]
)
_RESULTS = st.sampled_from(
    [
        AgentResult(agent_name="a", content=[ContentPart.of_text("x")]),
        AgentResult(agent_name="b", latency_ms=1.5, interrupted=True),
        _Result(agent_name="a subclass"),
        {"agent_name": "a dict"},
        None,
        "not a result",
    ]
)


@st.composite
def factories(draw: st.DrawFn, odd: bool) -> FrameFactory:
    values = {key: draw(strategy) for key, strategy in _PLAIN.items()}
    if odd:
        for key in draw(st.lists(st.sampled_from(sorted(_PLAIN)), min_size=1, max_size=2)):
            values[key] = draw(_ODD)
    return FrameFactory(**values)


def _assert_same(fast: Any, slow: Any) -> None:
    assert type(fast) is type(slow)
    if isinstance(fast, list):
        assert len(fast) == len(slow)
        for f, s in zip(fast, slow, strict=True):
            _assert_same(f, s)
        return
    if not isinstance(fast, BaseModel):
        assert fast == slow
        return
    assert list(fast.__dict__) == list(slow.__dict__)
    for f, s in zip(fast.__dict__.values(), slow.__dict__.values(), strict=True):
        _assert_same(f, s)
    assert fast.__pydantic_fields_set__ == slow.__pydantic_fields_set__
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_private__ == slow.__pydantic_private__


def _outcome(build: Any) -> tuple[str, Any]:
    try:
        return "ok", build()
    except ValidationError as exc:
        return "refused", exc.errors(include_url=False)


_FIXED = datetime(2026, 12, 3, 10, 30, 0, 123456, tzinfo=UTC)


def _compare(fast_build: Any, slow_build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The factory reads the clock through _frames._now, built directly or validated: a fixed
    # time for the first build, and its frame's own time for the one compared with it.
    with monkeypatch.context() as patched:
        patched.setattr(_frames, "_now", lambda: _FIXED)
        fast_kind, fast = _outcome(fast_build)
    stamp: datetime = fast.timestamp if fast_kind == "ok" else _FIXED
    with monkeypatch.context() as patched:
        patched.setattr(_frames, "_now", lambda: stamp)
        slow_kind, slow = _outcome(slow_build)
    assert fast_kind == slow_kind
    if fast_kind == "ok":
        _assert_same(fast, slow)
        assert fast == slow
        assert fast.to_json() == slow.to_json()
        assert fast.to_proto() == slow.to_proto()
    else:
        assert fast == slow


@_SETTINGS
@given(frames=factories(odd=False), text=_texts)
def test_a_plain_chunk_is_the_factorys(
    frames: FrameFactory, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compare(lambda: frames.chunk(text), lambda: frames._validated_chunk(text), monkeypatch)
    # Nothing mutable is shared between two frames.
    one, two = frames.chunk(text), frames.chunk(text)
    assert one.data is not two.data and one.data is not None and two.data is not None
    assert one.data.content is not two.data.content
    assert one.data.tool_calls is not two.data.tool_calls


@_SETTINGS
@given(frames=factories(odd=True), text=_texts | _ODD)
def test_any_chunk_is_the_factorys(
    frames: FrameFactory, text: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compare(lambda: frames.chunk(text), lambda: frames._validated_chunk(text), monkeypatch)


@_SETTINGS
@given(frames=factories(odd=False) | factories(odd=True), result=_RESULTS)
def test_a_done_frame_is_the_factorys(
    frames: FrameFactory, result: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compare(lambda: frames.done(result), lambda: frames._validated_done(result), monkeypatch)


def test_the_result_is_kept_as_it_is() -> None:
    frames = FrameFactory("a", "id", None, None, None, "m")
    result = AgentResult(agent_name="a")
    frame = frames.done(result)
    assert frame.result is result is frames._validated_done(result).result
    assert isinstance(frame, StreamChunk)
