"""The begin and finish steps build their statements from the new messages, result and usage as
given, and scrub them only when the parameters may hold a U+0000 (nul_free_call): the same
statement and parameters, over generated values, as scrubbing every value first did."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from riverbeam.store import NewMessage, _checks, _rows
from riverbeam.store._nul import (
    NUL,
    _has_nul,
    may_hold_nul,
    nul_free_call,
    nul_safe,
    nul_safe_but,
    scrub,
)
from riverbeam.store._pg_begin import BeginArgs, begin_call
from riverbeam.store._pg_one_message import finish_call
from riverbeam.store._sql import Statements
from riverbeam.types import AgentResult, ContentPart, TokenUsage
from tests.unit.types._wire_values import VALUES

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_SQL = Statements.for_schema('"s"')

# Text with U+0000 (and what looks like its escape) often.
_TEXT = st.text(st.sampled_from(["a", "é", NUL, "\\", "u", "0", '"', "\ufffd", "\n"]), max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_OBJECT = st.none() | st.dictionaries(_TEXT, _JSON, min_size=1, max_size=3)
_PART = (
    st.builds(ContentPart, type=st.just("text"), text=_TEXT, metadata=_OBJECT)
    | VALUES["ContentPart"]
)
_MESSAGE = st.builds(
    NewMessage,
    role=st.sampled_from(["ai", "tool", "human"]),
    content=st.lists(_PART, max_size=3),
    message_id=_TEXT.filter(bool),
    tool_call_id=st.none() | _TEXT,
    tool_name=st.none() | _TEXT,
    tool_args=_OBJECT,
    tool_result=_JSON,
    metadata=_OBJECT,
)
_RESULT = (
    st.none()
    | VALUES["AgentResult"]
    | st.builds(
        AgentResult, content=st.lists(_PART, max_size=2), agent_name=st.just("a"), output=_JSON
    )
)
_USAGE = st.none() | VALUES["TokenUsage"]


def _finish(messages: list[NewMessage], usage: Any, result: Any) -> tuple[str, list[Any]]:
    head = ("run", "owner", "completed", None, None, _rows.dump(usage), "m", _rows.dump(result), 1)
    return finish_call(_SQL, "s", head, messages, "completed", (), timedelta(hours=1))


_NUL_REPLY = [ContentPart.of_text(f"said {NUL}")]


@_SETTINGS
@given(st.lists(_MESSAGE, max_size=2), _USAGE, _RESULT)
@example([NewMessage(role="ai", content=_NUL_REPLY)], None, None)
@example([], None, AgentResult(content=_NUL_REPLY, agent_name="a"))
@example([NewMessage(role="ai", tool_args={NUL: 1})], TokenUsage(), None)
def test_the_finish_call_is_the_one_built_from_scrubbed_values(
    messages: list[NewMessage], usage: TokenUsage | None, result: AgentResult | None
) -> None:
    expected = _finish(scrub(messages), scrub(usage), scrub(result))
    assert nul_free_call(_finish, messages, usage, result) == expected


def _args(content: list[ContentPart], metadata: dict[str, Any] | None) -> BeginArgs:
    return BeginArgs(
        session_id="s",
        agent_name="a",
        run_id="r",
        lease_owner="o",
        ttl=timedelta(seconds=60),
        user_id=None,
        profile_id=None,
        org_id=None,
        interaction_id=None,
        request_id=None,
        human_content=content,
        message_metadata=metadata,
        exclusive=True,
        action_responses=(),
        limit=200,
        require_owner=None,
        require_org=None,
        agent_version=None,
        policy=_checks.version_policy(None),
        session_config=None,
        run_options=None,
        session_config_narrows=False,
        history_after=0,
        history_after_id=None,
    )


@_SETTINGS
@given(st.lists(_PART, max_size=3), _OBJECT)
@example(_NUL_REPLY, None)
@example([], {"k": [NUL]})
def test_the_begin_call_is_the_one_built_from_scrubbed_values(
    content: list[ContentPart], metadata: dict[str, Any] | None
) -> None:
    def call(c: list[ContentPart], m: dict[str, Any] | None) -> tuple[str, list[Any]]:
        args = _args(c, m)
        # the human message's new id, the same in both builds
        messages = [msg.model_copy(update={"message_id": "m"}) for msg in args.human_messages]
        return begin_call("s", args, "i", messages, (False, None))

    assert nul_free_call(call, content, metadata) == call(scrub(content), scrub(metadata))


@_SETTINGS
@given(st.one_of(_PART, _MESSAGE, _RESULT, _JSON))
def test_a_value_holding_nul_is_seen_in_its_json(value: Any) -> None:
    text = _rows.dump(value)
    if _has_nul(value):
        assert may_hold_nul([text])


def test_parameters_that_may_hold_nul() -> None:
    assert not may_hold_nul(["plain", None, 1, True, timedelta(1), ['{"a":"b"}']])
    assert may_hold_nul([f"a{NUL}"])
    assert may_hold_nul(['{"a":"\\u0000"}'])
    assert may_hold_nul([["x", '"\\u0000"']])
    assert may_hold_nul(['"\\\\u0000"'])  # a backslash then u0000: scrubbed, to no effect
    assert may_hold_nul([object()])  # anything else: taken to


def test_an_id_is_never_deferred() -> None:
    with pytest.raises(ValueError, match="session_id"):
        nul_safe_but("session_id")


async def test_deferred_arguments_reach_the_method_as_given() -> None:
    seen: dict[str, Any] = {}

    async def method(**kwargs: Any) -> None:
        seen.update(kwargs)

    content = [ContentPart.of_text(f"x{NUL}")]
    await nul_safe_but("human_content")(method)(human_content=content, other=[f"y{NUL}"])
    assert seen["human_content"] is content
    assert seen["other"] == ["y\ufffd"]
    await nul_safe(method)(human_content=content)
    assert seen["human_content"][0].text == "x\ufffd"
