"""Tool specs, argument validation, time limits, failures, and the remember tool."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents_kit import SESSION, Blocking, Failing, MemoryLog, Recorder, make_context, make_input

from riverbeam.agents import (
    ContextualTool,
    RememberTool,
    Tool,
    ToolCallContext,
    ToolSpec,
    json_params,
)
from riverbeam.agents._toolcall import BoundTool, error_result, jsonable
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TokenUsage


def _call(**context: Any) -> ToolCallContext:
    return ToolCallContext(make_input(), make_context(**context), "agent", "call_1")


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "x" * 65, "emoji😀", "slash/name"])
def test_tool_names_must_match_the_pattern(name: str) -> None:
    with pytest.raises(RiverbeamError) as caught:
        ToolSpec(name, "bad")
    assert caught.value.bem == "BEM-094"


@pytest.mark.parametrize("name", ["a", "git_push", "get-page", "X" * 64, "a1_b-2"])
def test_good_tool_names(name: str) -> None:
    assert ToolSpec(name, "ok").openai()["function"]["name"] == name


def test_json_params_builds_a_closed_object_schema() -> None:
    assert json_params({"text": {"type": "string"}}, ["text"]) == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }


def test_recorder_is_a_tool_and_remember_is_contextual() -> None:
    assert isinstance(Recorder("r"), Tool)
    assert not isinstance(Recorder("r"), ContextualTool)
    assert isinstance(RememberTool(), ContextualTool)


def test_an_invalid_schema_is_refused_when_bound() -> None:
    tool = Recorder("r", params={"n": {"type": "no-such-type"}})
    with pytest.raises(RiverbeamError) as caught:
        BoundTool(tool)
    assert caught.value.bem == "BEM-002"


class _Checked(Recorder):
    """A tool whose schema its maker has checked: BoundTool compiles it at the first call."""

    schema_checked = True


def test_a_checked_schema_is_compiled_at_the_first_call_and_still_validates() -> None:
    bound = BoundTool(_Checked("c", params={"n": {"type": "integer"}}, required=("n",)))
    assert bound.check_args({"n": 1}) is None
    refused = bound.check_args({"n": "one"})
    assert refused is not None and refused.bem == "BEM-090"
    missing = bound.check_args({})
    assert missing is not None and "'n' is a required property" in missing.message


def test_a_checked_schema_that_is_invalid_is_refused_at_the_first_call() -> None:
    bound = BoundTool(_Checked("c", params={"n": {"type": "no-such-type"}}))
    with pytest.raises(RiverbeamError) as caught:
        bound.check_args({"n": 1})
    assert caught.value.bem == "BEM-002"


async def test_valid_arguments_reach_the_tool() -> None:
    tool = Recorder("word_count", params={"text": {"type": "string"}}, required=("text",))
    outcome = await BoundTool(tool).run({"text": "a b"}, _call(), default_timeout_s=None)
    assert outcome.error is None
    assert outcome.result == {"tool": "word_count", "args": {"text": "a b"}}
    assert tool.calls == [{"text": "a b"}]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "'text' is a required property"),
        ({"text": 3}, "text: 3 is not of type 'string'"),
        ({"text": "a", "extra": 1}, "Additional properties"),
    ],
)
async def test_invalid_arguments_are_bem_090_and_do_not_run(args: dict, fragment: str) -> None:
    tool = Recorder("word_count", params={"text": {"type": "string"}}, required=("text",))
    outcome = await BoundTool(tool).run(args, _call(), default_timeout_s=None)
    assert outcome.error is not None and outcome.error.bem == "BEM-090"
    assert fragment in outcome.error.message
    assert outcome.result["error"]["code"] == "BEM-090"
    assert tool.calls == []


async def test_unparseable_arguments_are_bem_090() -> None:
    outcome = await BoundTool(Recorder("r")).run(
        {}, _call(), default_timeout_s=None, args_error="arguments are not JSON"
    )
    assert outcome.error is not None and outcome.error.bem == "BEM-090"


async def test_a_tool_over_its_time_limit_is_bem_091() -> None:
    slow = Blocking(timeout_s=0.05)
    outcome = await BoundTool(slow).run({}, _call(), default_timeout_s=None)
    assert outcome.error is not None and outcome.error.bem == "BEM-091"
    assert slow.cancelled


async def test_the_default_time_limit_applies_when_the_spec_sets_none() -> None:
    outcome = await BoundTool(Blocking()).run({}, _call(), default_timeout_s=0.05)
    assert outcome.error is not None and outcome.error.bem == "BEM-091"


async def test_tool_failures() -> None:
    own = await BoundTool(Failing("push", RiverbeamError(ErrorCode.PUSH_REJECTED, "rejected"))).run(
        {}, _call(), default_timeout_s=None
    )
    assert (
        own.error is not None and own.error.bem == "BEM-330" and own.error.details["tool"] == "push"
    )
    crash = await BoundTool(Failing("boom", ValueError("bad value"))).run(
        {}, _call(), default_timeout_s=None
    )
    assert (
        crash.error is not None
        and crash.error.bem == "BEM-092"
        and "bad value" in crash.error.message
    )
    own_timeout = await BoundTool(Failing("t", TimeoutError())).run(
        {}, _call(), default_timeout_s=10
    )
    assert own_timeout.error is not None and own_timeout.error.bem == "BEM-092"


async def test_cancellation_is_not_swallowed() -> None:
    slow = Blocking()
    task = asyncio.create_task(BoundTool(slow).run({}, _call(), default_timeout_s=None))
    await slow.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.cancelled


def test_results_become_plain_json() -> None:
    assert jsonable({"a": (1, 2), "b": {3}}) == {"a": [1, 2], "b": [3]}
    assert jsonable(TokenUsage(prompt_tokens=1)) == {
        "prompt_tokens": 1,
        "completion_tokens": 0,
        "total_tokens": 0,
    }
    assert jsonable({"u": TokenUsage()})["u"]["total_tokens"] == 0
    assert error_result(RiverbeamError(ErrorCode.TOOL_TIMEOUT, "late", tool="x")) == {
        "error": {"code": "BEM-091", "message": "late", "details": {"tool": "x"}}
    }


# ---- remember --------------------------------------------------------------------------------
async def test_remember_defaults_to_the_session_scope() -> None:
    log = MemoryLog()
    outcome = await BoundTool(RememberTool()).run(
        {"content": "likes tea"}, _call(memory_writer=log), default_timeout_s=None
    )
    assert outcome.error is None
    assert outcome.result["remembered"] is True
    assert outcome.result["scope"] == {"name": "session", "id": SESSION}
    assert [(e.scope_name, e.scope_id, e.content) for e in log.entries] == [
        ("session", SESSION, "likes tea")
    ]


async def test_remember_writes_to_a_scope_of_the_request() -> None:
    log = MemoryLog()
    call = _call(memory_writer=log, memory_scopes=[("user", "u1"), ("org", "o1")])
    await BoundTool(RememberTool()).run(
        {"content": "a", "scope_name": "user", "scope_id": "u1", "metadata": {"k": 1}},
        call,
        default_timeout_s=None,
    )
    await BoundTool(RememberTool()).run(
        {"content": "b", "scope_name": "org"}, call, default_timeout_s=None
    )
    assert [(e.scope_name, e.scope_id, e.metadata) for e in log.entries] == [
        ("user", "u1", {"k": 1}),
        ("org", "o1", None),
    ]


@pytest.mark.parametrize(
    "args",
    [
        {"content": "x", "scope_name": "user", "scope_id": "someone-else"},
        {"content": "x", "scope_name": "org"},
        {"content": "x", "scope_id": "u1"},
        {"content": "x", "scope_name": "session", "scope_id": "another-session"},
    ],
)
async def test_remember_refuses_other_scopes_with_bem_100(args: dict) -> None:
    log = MemoryLog()
    outcome = await BoundTool(RememberTool()).run(
        args, _call(memory_writer=log, memory_scopes=[("user", "u1")]), default_timeout_s=None
    )
    assert outcome.error is not None and outcome.error.bem == "BEM-100"
    assert log.entries == []


async def test_remember_refuses_an_ambiguous_scope_name() -> None:
    call = _call(memory_writer=MemoryLog(), memory_scopes=[("user", "u1"), ("user", "u2")])
    outcome = await BoundTool(RememberTool()).run(
        {"content": "x", "scope_name": "user"}, call, default_timeout_s=None
    )
    assert outcome.error is not None and outcome.error.bem == "BEM-100"


async def test_remember_without_a_writer_is_bem_109() -> None:
    outcome = await BoundTool(RememberTool()).run({"content": "x"}, _call(), default_timeout_s=None)
    assert outcome.error is not None and outcome.error.bem == "BEM-109"


async def test_remember_uses_its_own_writer_when_the_context_has_none() -> None:
    log = MemoryLog()
    outcome = await BoundTool(RememberTool(log)).run(
        {"content": "x"}, _call(), default_timeout_s=None
    )
    assert outcome.error is None and len(log.entries) == 1


async def test_remember_as_a_plain_tool() -> None:
    log = MemoryLog()
    result = await RememberTool(log).invoke({"content": "x"}, make_input())
    assert result["scope"] == {"name": "session", "id": SESSION}
    with pytest.raises(RiverbeamError) as caught:
        await RememberTool().invoke({"content": "x"}, make_input())
    assert caught.value.bem == "BEM-109"
    with pytest.raises(RiverbeamError) as caught:
        await RememberTool(log).invoke(
            {"content": "x", "scope_name": "user", "scope_id": "u"}, make_input()
        )
    assert caught.value.bem == "BEM-100"
