"""EchoClient, ScriptedClient, completions, and FallbackClient over scripted clients."""

from __future__ import annotations

import pytest
from agents_kit import model_error

from riverbeam.agents import (
    CompletionClient,
    EchoClient,
    FallbackClient,
    PendingToolCall,
    ScriptedClient,
    Text,
    TextDelta,
    ToolCalls,
    ToolSpec,
    collect,
    falls_through,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TokenUsage

USER = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "first"},
    {"role": "assistant", "content": "ok"},
    {"role": "user", "content": "second one"},
]


def test_clients_satisfy_the_protocol() -> None:
    for client in (EchoClient(), ScriptedClient([]), FallbackClient([EchoClient()])):
        assert isinstance(client, CompletionClient)


async def test_echo_client_echoes_the_last_user_message() -> None:
    events = [e async for e in EchoClient().stream(USER, [])]
    assert events[0] == TextDelta("second one")
    final = events[-1]
    assert isinstance(final, Text) and final.text == "second one"
    assert final.model == "echo"
    assert final.usage is not None and final.usage.completion_tokens == 2


async def test_echo_client_reads_content_parts_and_reports_the_requested_model() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a "},
                {"type": "image_url"},
                {"type": "text", "text": "b"},
            ],
        }
    ]
    completion = await EchoClient().complete(messages, [], model="m1")
    assert isinstance(completion, Text)
    assert completion.text == "a b" and completion.model == "m1"


async def test_scripted_client_plays_steps_in_order_and_records_calls() -> None:
    spec = ToolSpec("lookup", "Look up.")
    client = ScriptedClient(
        [ToolCalls([PendingToolCall("lookup", {"q": 1}, id="c1")]), Text("done here")]
    )
    first = await client.complete(USER, [spec], model="routed")
    assert isinstance(first, ToolCalls) and first.calls[0].id == "c1"
    assert first.model == "routed"
    events = [e async for e in client.stream(USER, [])]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["done ", "here"]
    assert events[-1] == Text("done here", model="scripted")
    assert [c.model for c in client.calls] == ["routed", None]
    assert client.calls[0].tool_names == ["lookup"]
    assert client.calls[0].messages == USER
    assert client.remaining == 0


async def test_scripted_client_runs_out_with_bem_081() -> None:
    client = ScriptedClient([Text("only")])
    await client.complete(USER, [])
    with pytest.raises(RiverbeamError) as caught:
        await client.complete(USER, [])
    assert caught.value.bem == "BEM-081"


async def test_scripted_client_raises_error_steps() -> None:
    client = ScriptedClient([model_error(ErrorCode.MODEL_RATE_LIMITED)])
    with pytest.raises(RiverbeamError) as caught:
        await client.complete(USER, [])
    assert caught.value.bem == "BEM-083"


async def test_collect_needs_a_completion() -> None:
    async def only_text():  # type: ignore[no-untyped-def]
        yield TextDelta("x")

    with pytest.raises(RiverbeamError) as caught:
        await collect(only_text())
    assert caught.value.bem == "BEM-093"


def test_pending_tool_call_from_json() -> None:
    good = PendingToolCall.from_json(name="f", arguments='{"a": [1, 2]}', id="c")
    assert good.args == {"a": [1, 2]} and good.args_error is None
    assert good.openai() == {
        "id": "c",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a": [1, 2]}'},
    }
    assert PendingToolCall.from_json(name="f", arguments="").args == {}
    broken = PendingToolCall.from_json(name="f", arguments='{"a": ')
    assert broken.args == {} and broken.args_error and "not JSON" in broken.args_error
    listed = PendingToolCall.from_json(name="f", arguments="[1]")
    assert listed.args_error and "JSON object" in listed.args_error
    assert PendingToolCall("f").id.startswith("call_")


def test_tool_calls_needs_a_call() -> None:
    with pytest.raises(ValueError):
        ToolCalls(())


# ---- FallbackClient --------------------------------------------------------------------------
async def test_fallback_moves_on_after_retriable_failures() -> None:
    first = ScriptedClient([model_error(ErrorCode.MODEL_UNAVAILABLE)])
    second = ScriptedClient([model_error(ErrorCode.MODEL_RATE_LIMITED)])
    third = ScriptedClient(
        [Text("from third", usage=TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3))]
    )
    seen: list[tuple[str, int]] = []
    client = FallbackClient(
        [first, second, third], on_fallback=lambda err, i: seen.append((err.bem, i))
    )
    completion = await client.complete(USER, [], model="m")
    assert isinstance(completion, Text) and completion.text == "from third"
    assert seen == [("BEM-085", 0), ("BEM-083", 1)]
    assert [len(c.calls) for c in (first, second, third)] == [1, 1, 1]
    assert third.calls[0].model == "m"


@pytest.mark.parametrize(
    "error",
    [
        model_error(ErrorCode.MODEL_AUTH),
        model_error(ErrorCode.MODEL_CONTEXT_LENGTH),
        model_error(ErrorCode.MODEL_ERROR, status=400, retriable="false"),
    ],
)
async def test_fallback_stops_on_non_retriable_failures(error: RiverbeamError) -> None:
    second = ScriptedClient([Text("never")])
    with pytest.raises(RiverbeamError) as caught:
        await FallbackClient([ScriptedClient([error]), second]).complete(USER, [])
    assert caught.value.code is error.code
    assert second.calls == []


async def test_fallback_all_failed_is_bem_095() -> None:
    client = FallbackClient(
        [
            ScriptedClient([model_error(ErrorCode.MODEL_UNAVAILABLE)]),
            ScriptedClient([model_error(ErrorCode.MODEL_BAD_RESPONSE)]),
        ]
    )
    with pytest.raises(RiverbeamError) as caught:
        await client.complete(USER, [])
    assert caught.value.bem == "BEM-095"
    assert caught.value.details["codes"] == "BEM-085,BEM-093"


async def test_fallback_does_not_leave_a_client_that_started_streaming() -> None:
    class HalfStream:
        async def complete(self, messages, tools, *, model=None):  # type: ignore[no-untyped-def]
            raise AssertionError

        async def stream(self, messages, tools, *, model=None):  # type: ignore[no-untyped-def]
            yield TextDelta("partial")
            raise model_error(ErrorCode.MODEL_UNAVAILABLE)

    backup = ScriptedClient([Text("backup")])
    seen: list[object] = []
    with pytest.raises(RiverbeamError) as caught:
        async for event in FallbackClient([HalfStream(), backup]).stream(USER, []):
            seen.append(event)
    assert caught.value.bem == "BEM-085"
    assert seen == [TextDelta("partial")]
    assert backup.calls == []


async def test_fallback_custom_policy() -> None:
    backup = ScriptedClient([Text("backup")])
    client = FallbackClient(
        [ScriptedClient([model_error(ErrorCode.MODEL_AUTH)]), backup],
        should_fall_through=lambda e: True,
    )
    assert isinstance(await client.complete(USER, []), Text)


def test_fallback_needs_a_client_and_falls_through_policy() -> None:
    with pytest.raises(RiverbeamError):
        FallbackClient([])
    assert falls_through(model_error(ErrorCode.SCRIPT_EXHAUSTED))
    assert falls_through(model_error(ErrorCode.MODEL_ERROR))
    assert not falls_through(model_error(ErrorCode.MODEL_ERROR, retriable="false"))
