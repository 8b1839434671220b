"""RigAgentRunner over OpenAiCompatible and FallbackClient, against real local HTTP servers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from agents_kit import Recorder, make_context, make_input, resolved, run, tool_frames

from riverbeam.agents import FallbackClient, OpenAiCompatible, RigAgentRunner
from tests.support.chat_server import ChatServer, call, http_error, text, tool_calls

KEY = "k-local"


async def no_sleep(delay: float) -> None:
    return None


@pytest.fixture
async def server() -> AsyncIterator[ChatServer]:
    async with ChatServer(api_key=KEY) as chat:
        yield chat


async def test_streamed_tokens_become_chunk_frames_and_tool_deltas_assemble(
    server: ChatServer,
) -> None:
    words = Recorder(
        "word_count", params={"text": {"type": "string"}}, required=("text",), result={"words": 4}
    )
    server.push(
        tool_calls(
            [call("word_count", {"text": "one two three four"}, id="w1")],
            arg_chunk=4,
            usage={"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
        ),
        text(
            "That text has four words.",
            usage={"prompt_tokens": 50, "completion_tokens": 6, "total_tokens": 56},
        ),
    )
    context = make_context(model_config_resolved=resolved("routed-model"))
    async with OpenAiCompatible(server.url, KEY, "own-model", sleep=no_sleep) as client:
        runner = RigAgentRunner.for_skill("count", client, [words])
        frames = await run(runner, make_input("count: one two three four"), context)
    chunks = [f.data.text for f in frames if f.type == "chunk" and f.data]
    assert chunks == ["That ", "text ", "has ", "four ", "words."]
    assert words.calls == [{"text": "one two three four"}]
    assert tool_frames(frames) == [
        ("action", "word_count", "w1"),
        ("tool_result", "word_count", "w1"),
    ]
    result = frames[-1].result
    assert result is not None and result.text == "That text has four words."
    assert result.model_used == "routed-model"
    assert result.token_usage is not None and result.token_usage.total_tokens == 91
    assert context.usage.snapshot().total_tokens == 91
    second = server.completions[1].body
    assert second["model"] == "routed-model"
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]
    assert second["messages"][2] == {
        "role": "tool",
        "tool_call_id": "w1",
        "content": json.dumps({"words": 4}),
    }
    assert second["tools"][0]["function"]["name"] == "word_count"


async def test_endpoint_errors_become_error_frames(server: ChatServer) -> None:
    server.push(http_error(400, "prompt is too long for this model"))
    async with OpenAiCompatible(server.url, KEY, "m", sleep=no_sleep) as client:
        frames = await run(RigAgentRunner.new("a", client, []), make_input())
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-084"
    assert "too long" in (frames[-1].error or "")
    # Nothing could be compacted (one short turn), so there was no second attempt.
    assert len(server.completions) == 1


async def test_fallback_chain_across_endpoints(server: ChatServer) -> None:
    async with ChatServer() as backup:
        server.push(*[http_error(503, "down")] * 2)
        backup.push(text("from the backup"))
        async with (
            OpenAiCompatible(server.url, KEY, "primary", max_retries=1, sleep=no_sleep) as primary,
            OpenAiCompatible(
                backup.url, "other", "secondary", pin_model=True, sleep=no_sleep
            ) as secondary,
        ):
            runner = RigAgentRunner.new("a", FallbackClient([primary, secondary]), [])
            frames = await run(runner, make_input("hi"))
        assert frames[-1].result is not None and frames[-1].result.text == "from the backup"
        assert frames[-1].result.model_used == "secondary"
        assert len(server.completions) == 2 and len(backup.completions) == 1


async def test_fallback_stops_at_a_refused_key(server: ChatServer) -> None:
    async with ChatServer() as backup:
        async with (
            OpenAiCompatible(server.url, "wrong-key", "m", sleep=no_sleep) as primary,
            OpenAiCompatible(backup.url, "x", "m", sleep=no_sleep) as secondary,
        ):
            frames = await run(
                RigAgentRunner.new("a", FallbackClient([primary, secondary]), []), make_input()
            )
        assert frames[-1].error_code == "BEM-082"
        assert backup.completions == []


async def test_fallback_all_failed_is_an_error_frame_with_bem_095(server: ChatServer) -> None:
    server.push(http_error(500), http_error(502))
    async with OpenAiCompatible(server.url, KEY, "m", max_retries=0, sleep=no_sleep) as primary:
        frames = await run(
            RigAgentRunner.new("a", FallbackClient([primary, primary]), []), make_input()
        )
    assert frames[-1].error_code == "BEM-095"
