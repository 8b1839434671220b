"""RigAgentRunner's loop, driven by ScriptedClient."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents_kit import (
    INTERACTION,
    SESSION,
    Blocking,
    Failing,
    MemoryLog,
    Recorder,
    make_context,
    make_input,
    model_error,
    resolved,
    run,
    tool_frames,
)

from riverbeam.agents import (
    Agent,
    PendingToolCall,
    RememberTool,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
    skill_by_name,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import agent_id_for
from riverbeam.types import StreamChunk, TokenUsage


def usage(p: int, c: int) -> TokenUsage:
    return TokenUsage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c)


def calls(
    *pairs: tuple[str, dict[str, Any]], text: str = "", u: TokenUsage | None = None
) -> ToolCalls:
    return ToolCalls(
        tuple(PendingToolCall(n, a, id=f"c_{n}_{i}") for i, (n, a) in enumerate(pairs)),
        text=text,
        usage=u,
    )


def error_of(frames: list[StreamChunk]) -> str | None:
    assert frames[-1].type == "error", [f.type for f in frames]
    return frames[-1].error_code


def test_runner_is_an_agent_with_metadata() -> None:
    runner = RigAgentRunner.for_skill("author", ScriptedClient([]), [])
    assert isinstance(runner, Agent)
    meta = runner.metadata()
    assert meta.name == "author" and meta.description == skill_by_name("author").description  # type: ignore[union-attr]
    assert (
        meta.tags == ["rig", "skill:author"]
        and meta.version
        and meta.supported_modalities == ["text"]
    )


async def test_text_reply_streams_chunks_then_done() -> None:
    client = ScriptedClient([Text("Hello there, friend.", usage=usage(7, 4), model="served")])
    runner = RigAgentRunner.for_skill("consume", client, [])
    context = make_context(model_config_resolved=resolved())
    frames = await run(runner, make_input("hi", agent="consume"), context)
    assert [f.type for f in frames] == [
        "placeholder",
        "thinking",
        "chunk",
        "chunk",
        "chunk",
        "done",
    ]
    assert "".join(f.data.text for f in frames if f.type == "chunk") == "Hello there, friend."  # type: ignore[union-attr]
    assert all(f.data.is_delta for f in frames if f.type == "chunk")  # type: ignore[union-attr]
    assert frames[1].data is not None and frames[1].data.phase == "thinking"
    result = frames[-1].result
    assert result is not None
    assert result.text == "Hello there, friend."
    assert result.model_used == "served"
    assert result.token_usage == usage(7, 4)
    assert (result.session_id, result.interaction_id, result.agent_name) == (
        SESSION,
        INTERACTION,
        "consume",
    )
    assert context.usage.snapshot() == usage(7, 4)
    for frame in frames:
        assert (frame.agent_name, frame.agent_id, frame.session_id, frame.interaction_id) == (
            "consume",
            agent_id_for("consume"),
            SESSION,
            INTERACTION,
        )
        assert frame.run_id is not None and frame.seq is None and frame.request_id is None
    assert len({f.message_id for f in frames if f.type in ("placeholder", "chunk", "done")}) == 1


async def test_the_model_gets_the_skill_prompt_first_and_the_user_turn_once() -> None:
    client = ScriptedClient([Text("ok")])
    runner = RigAgentRunner.for_skill("summarize", client, [])
    await run(runner, make_input("summarize this"))
    messages = client.calls[0].messages
    assert messages[0] == {"role": "system", "content": skill_by_name("summarize").system_prompt}  # type: ignore[union-attr]
    assert [m for m in messages if m["role"] == "user"] == [
        {"role": "user", "content": "summarize this"}
    ]


async def test_the_routed_model_is_requested_and_reported() -> None:
    client = ScriptedClient([Text("ok")])
    frames = await run(
        RigAgentRunner.new("a", client, []),
        make_input(),
        make_context(model_config_resolved=resolved("nv-model")),
    )
    assert client.calls[0].model == "nv-model"
    assert frames[-1].result is not None and frames[-1].result.model_used == "nv-model"


async def test_two_tools_then_an_answer() -> None:
    read = Recorder(
        "read_file", params={"path": {"type": "string"}}, required=("path",), result="file body"
    )
    status = Recorder("git_status", result={"clean": True})
    client = ScriptedClient(
        [
            calls(("read_file", {"path": "a.md"}), text="Reading.", u=usage(10, 2)),
            calls(("git_status", {}), u=usage(20, 2)),
            Text("All good.", usage=usage(30, 3)),
        ]
    )
    context = make_context()
    frames = await run(
        RigAgentRunner.new("a", client, [read, status]), make_input("check"), context
    )
    assert tool_frames(frames) == [
        ("action", "read_file", "c_read_file_0"),
        ("tool_result", "read_file", "c_read_file_0"),
        ("action", "git_status", "c_git_status_0"),
        ("tool_result", "git_status", "c_git_status_0"),
    ]
    first_call = next(f for f in frames if f.type == "tool")
    assert (
        first_call.data is not None
        and first_call.data.role == "ai"
        and first_call.data.text == "Reading."
    )
    assert first_call.data.tool_args == {"path": "a.md"}
    results = [
        f.data.tool_result for f in frames if f.type == "tool" and f.data and f.data.role == "tool"
    ]
    assert results == ["file body", {"clean": True}]
    result = frames[-1].result
    assert result is not None and result.text == "All good."
    assert [(r.tool_name, r.args, r.result) for r in result.tool_calls] == [
        ("read_file", {"path": "a.md"}, "file body"),
        ("git_status", {}, {"clean": True}),
    ]
    assert all(r.latency_ms is not None for r in result.tool_calls)
    assert result.token_usage == usage(60, 7) and context.usage.snapshot() == usage(60, 7)
    assert read.calls == [{"path": "a.md"}] and status.calls == [{}]
    second = client.calls[1].messages
    assert (
        second[-2]["role"] == "assistant"
        and second[-2]["tool_calls"][0]["function"]["name"] == "read_file"
    )
    assert second[-1] == {"role": "tool", "tool_call_id": "c_read_file_0", "content": "file body"}
    assert [spec.name for spec in client.calls[0].tools] == ["read_file", "git_status"]


async def test_too_many_rounds_is_bem_088() -> None:
    tool = Recorder("ping")
    client = ScriptedClient([calls(("ping", {}))] * 9)
    frames = await run(RigAgentRunner.new("a", client, [tool]), make_input())
    assert error_of(frames) == "BEM-088"
    assert len(tool.calls) == 8


async def test_max_rounds_is_configurable() -> None:
    tool = Recorder("ping")
    client = ScriptedClient([calls(("ping", {}))] * 3)
    frames = await run(
        RigAgentRunner.new("a", client, [tool], options=RigOptions(max_rounds=2)), make_input()
    )
    assert error_of(frames) == "BEM-088" and len(tool.calls) == 2


async def test_unknown_tool_is_bem_089() -> None:
    client = ScriptedClient([calls(("nope", {}))])
    frames = await run(RigAgentRunner.new("a", client, [Recorder("real")]), make_input())
    assert error_of(frames) == "BEM-089"
    assert tool_frames(frames) == [
        ("action", "nope", "c_nope_0"),
        ("tool_result", "nope", "c_nope_0"),
    ]


async def test_unknown_tool_is_shown_to_the_model_with_the_model_policy() -> None:
    client = ScriptedClient([calls(("nope", {})), Text("sorry")])
    runner = RigAgentRunner.new("a", client, [], options=RigOptions(tool_errors="model"))
    frames = await run(runner, make_input())
    assert frames[-1].type == "done"
    assert json.loads(client.calls[1].messages[-1]["content"])["error"]["code"] == "BEM-089"


async def test_invalid_arguments_go_back_to_the_model_even_when_errors_are_fatal() -> None:
    tool = Recorder("count", params={"text": {"type": "string"}}, required=("text",))
    client = ScriptedClient(
        [calls(("count", {"txt": "x"})), calls(("count", {"text": "x"})), Text("3")]
    )
    frames = await run(RigAgentRunner.new("a", client, [tool]), make_input())
    assert (
        frames[-1].type == "done"
        and frames[-1].result is not None
        and frames[-1].result.text == "3"
    )
    seen = json.loads(client.calls[1].messages[-1]["content"])
    assert (
        seen["error"]["code"] == "BEM-090"
        and "'text' is a required property" in seen["error"]["message"]
    )
    assert tool.calls == [{"text": "x"}]


async def test_unparseable_arguments_go_back_to_the_model() -> None:
    bad = ToolCalls((PendingToolCall.from_json(name="count", arguments="{oops", id="c1"),))
    client = ScriptedClient([bad, Text("fixed")])
    frames = await run(RigAgentRunner.new("a", client, [Recorder("count")]), make_input())
    assert frames[-1].type == "done"
    assert client.calls[1].messages[-2]["tool_calls"][0]["function"]["arguments"] == "{oops"
    assert json.loads(client.calls[1].messages[-1]["content"])["error"]["code"] == "BEM-090"


@pytest.mark.parametrize(
    ("tool", "code"),
    [
        (Failing("push", RiverbeamError(ErrorCode.PUSH_REJECTED, "rejected by remote")), "BEM-330"),
        (Failing("boom", RuntimeError("kaput")), "BEM-092"),
        (Blocking("slow", timeout_s=0.05), "BEM-091"),
    ],
)
async def test_tool_errors_are_fatal_by_default(tool: Any, code: str) -> None:
    client = ScriptedClient([calls((tool.name, {})), Text("unreached")])
    frames = await run(RigAgentRunner.new("a", client, [tool]), make_input())
    assert error_of(frames) == code
    assert frames[-1].error
    assert [t for t, _, _ in tool_frames(frames)] == ["action", "tool_result"]
    assert client.remaining == 1


@pytest.mark.parametrize(
    ("tool", "code"),
    [
        (Failing("push", RiverbeamError(ErrorCode.PUSH_REJECTED, "rejected")), "BEM-330"),
        (Blocking("slow", timeout_s=0.05), "BEM-091"),
    ],
)
async def test_tool_errors_can_go_to_the_model(tool: Any, code: str) -> None:
    client = ScriptedClient([calls((tool.name, {})), Text("it failed, sorry")])
    runner = RigAgentRunner.new("a", client, [tool], options=RigOptions(tool_errors="model"))
    frames = await run(runner, make_input())
    assert frames[-1].type == "done"
    assert json.loads(client.calls[1].messages[-1]["content"])["error"]["code"] == code
    assert (
        frames[-1].result is not None
        and frames[-1].result.tool_calls[0].result["error"]["code"] == code
    )


async def test_model_errors_become_an_error_frame() -> None:
    frames = await run(RigAgentRunner.new("a", ScriptedClient([]), []), make_input())
    assert error_of(frames) == "BEM-081"
    assert [f.type for f in frames] == ["placeholder", "thinking", "error"]
    frames = await run(
        RigAgentRunner.new("a", ScriptedClient([model_error(ErrorCode.MODEL_AUTH)]), []),
        make_input(),
    )
    assert error_of(frames) == "BEM-082"


async def test_unexpected_exceptions_become_bem_001() -> None:
    class Broken:
        async def complete(self, messages, tools, *, model=None):  # type: ignore[no-untyped-def]
            raise AssertionError

        async def stream(self, messages, tools, *, model=None):  # type: ignore[no-untyped-def]
            raise KeyError("bug")
            yield

    frames = await run(RigAgentRunner.new("a", Broken(), []), make_input())
    assert error_of(frames) == "BEM-001"


async def test_cancellation_propagates_through_a_running_tool() -> None:
    slow = Blocking()
    runner = RigAgentRunner.new("a", ScriptedClient([calls(("slow", {}))]), [slow])
    seen: list[StreamChunk] = []

    async def consume() -> None:
        async for frame in runner.stream(make_input(), make_context()):
            seen.append(frame)

    task = asyncio.create_task(consume())
    await slow.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.cancelled
    assert tool_frames(seen) == [
        ("action", "slow", "c_slow_0")
    ]  # the call frame went out before it ran


async def test_closing_the_stream_early_stops_the_run() -> None:
    tool = Recorder("ping")
    runner = RigAgentRunner.new("a", ScriptedClient([calls(("ping", {})), Text("x")]), [tool])
    stream = runner.stream(make_input(), make_context())
    assert (await anext(stream)).type == "placeholder"
    await stream.aclose()  # type: ignore[attr-defined]
    assert tool.calls == []


def test_for_skill_keeps_only_allowed_tools() -> None:
    tools = [Recorder("read_file"), Recorder("write_file"), Recorder("search")]
    assert [
        s.name for s in RigAgentRunner.for_skill("summarize", ScriptedClient([]), tools).tool_specs
    ] == ["read_file"]
    assert [
        s.name for s in RigAgentRunner.for_skill("consume", ScriptedClient([]), tools).tool_specs
    ] == ["search"]


def test_for_skill_unknown_skill_gets_all_tools_and_no_prompt() -> None:
    runner = RigAgentRunner.for_skill("custom", ScriptedClient([]), [Recorder("a"), Recorder("b")])
    assert runner.system_prompt == "" and [s.name for s in runner.tool_specs] == ["a", "b"]
    assert runner.metadata().tags == ["rig"]


def test_new_gets_all_tools_and_the_skill_prompt() -> None:
    author = skill_by_name("author")
    runner = RigAgentRunner.new("docs", ScriptedClient([]), [Recorder("search")], author)
    assert runner.system_prompt == author.system_prompt  # type: ignore[union-attr]
    assert [s.name for s in runner.tool_specs] == ["search"]
    assert RigAgentRunner.new("d", ScriptedClient([]), [], "review").skill is skill_by_name(
        "review"
    )
    assert runner.metadata().name == "docs"


def test_two_tools_with_one_name_are_refused() -> None:
    with pytest.raises(RiverbeamError) as caught:
        RigAgentRunner.new("a", ScriptedClient([]), [Recorder("x"), Recorder("x")])
    assert caught.value.bem == "BEM-002"


async def test_remember_works_through_the_runner() -> None:
    log = MemoryLog()
    client = ScriptedClient(
        [
            calls(("remember", {"content": "prefers metric units", "scope_name": "user"})),
            Text("Noted."),
        ]
    )
    context = make_context(memory_writer=log, memory_scopes=[("session", SESSION), ("user", "u1")])
    frames = await run(RigAgentRunner.new("a", client, [RememberTool()]), make_input(), context)
    assert frames[-1].type == "done"
    assert [(e.scope_name, e.scope_id, e.content) for e in log.entries] == [
        ("user", "u1", "prefers metric units")
    ]


async def test_remember_without_a_writer_is_bem_109() -> None:
    client = ScriptedClient([calls(("remember", {"content": "x"}))])
    frames = await run(RigAgentRunner.new("a", client, [RememberTool()]), make_input())
    assert error_of(frames) == "BEM-109"


async def test_remember_outside_the_scopes_is_bem_100() -> None:
    client = ScriptedClient(
        [calls(("remember", {"content": "x", "scope_name": "user", "scope_id": "u2"}))]
    )
    context = make_context(memory_writer=MemoryLog(), memory_scopes=[("user", "u1")])
    frames = await run(RigAgentRunner.new("a", client, [RememberTool()]), make_input(), context)
    assert error_of(frames) == "BEM-100"


async def test_tools_receive_the_request() -> None:
    tool = Recorder("who")
    await run(
        RigAgentRunner.new("a", ScriptedClient([calls(("who", {})), Text("x")]), [tool]),
        make_input(metadata={"k": "v"}),
    )
    assert tool.inputs[0].session_id == SESSION and tool.inputs[0].metadata == {"k": "v"}


async def test_history_with_or_without_the_current_turn_sends_it_once() -> None:
    from agents_kit import msg

    run_id = "0b7c4d5e-6f70-4a81-9293-a4b5c6d7e8f9"
    earlier = [msg("human", "first"), msg("ai", "answer")]
    for history in (earlier, [*earlier, msg("human", "second", run_id=run_id)]):
        client = ScriptedClient([Text("ok")])
        await run(
            RigAgentRunner.new("a", client, []),
            make_input("second", run_id=run_id),
            make_context(history=history),
        )
        sent = client.calls[0].messages
        assert [(m["role"], m["content"]) for m in sent] == [
            ("user", "first"),
            ("assistant", "answer"),
            ("user", "second"),
        ]


async def test_echo_client_behind_the_runner() -> None:
    from riverbeam.agents import EchoClient

    frames = await run(RigAgentRunner.for_skill("consume", EchoClient(), []), make_input("ping"))
    result = frames[-1].result
    assert result is not None and result.text == "ping" and result.model_used == "echo"
    assert result.token_usage is not None and result.token_usage.completion_tokens == 1
