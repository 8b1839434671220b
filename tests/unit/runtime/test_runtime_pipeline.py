"""The invoke and resume pipeline, in one process with the in-memory store."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from riverbeam.agents import (
    PendingToolCall,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import Grant, PipelineOptions, RiverBeam
from riverbeam.store import InMemoryStore
from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamAck, StreamChunk
from tests.unit.runtime.runtime_kit import CountingTool, FramesAgent, approval, text_request

GUARD_S = 10.0  # a hang guard for waits, never a timing assertion


def author_beam(
    steps: list[Any], *, options: PipelineOptions | None = None
) -> tuple[RiverBeam, dict[str, CountingTool]]:
    tools = {
        "a": CountingTool("a"),
        "b": CountingTool("b"),
        "push": CountingTool("push", confirm=True),
    }
    beam = RiverBeam(options=options)
    beam.register_agent(
        RigAgentRunner.new("author", ScriptedClient(steps), list(tools.values()), None)
    )
    return beam, tools


def two_tools_then_push() -> list[Any]:
    return [
        ToolCalls([PendingToolCall("a", {"v": "1"}), PendingToolCall("b", {"v": "2"})]),
        ToolCalls([PendingToolCall("push", {"v": "ref"})]),
        Text("pushed, done"),
    ]


async def test_echo_invoke_records_the_hierarchy() -> None:
    beam = RiverBeam()
    beam.register_echo_agent("assistant")
    result = await beam.invoke(text_request("assistant", "what is riverbeam?"))
    assert isinstance(result, AgentResult)
    assert result.text == "Echo: what is riverbeam?"
    assert result.interaction_id and result.run_id and result.request_id
    run = await beam.get_run(result.run_id)
    assert run.status == "completed"
    assert (await beam.get_interaction(result.interaction_id)).status == "completed"
    assert result.session_id is not None
    messages = await beam.list_messages(result.session_id)
    assert [(m.seq, m.role, m.text) for m in messages] == [
        (1, "human", "what is riverbeam?"),
        (2, "ai", "Echo: what is riverbeam?"),
    ]
    session = await beam.get_session(result.session_id)
    assert session.last_active_at >= session.created_at


async def test_second_turn_continues_the_session() -> None:
    beam = RiverBeam()
    beam.register_echo_agent("assistant")
    sid = str(uuid.uuid4())
    await beam.invoke(text_request("assistant", "one", sid))
    await beam.invoke(text_request("assistant", "two", sid))
    assert [m.seq for m in await beam.list_messages(sid)] == [1, 2, 3, 4]


async def test_streaming_frames_in_order_with_done_last() -> None:
    beam = RiverBeam()
    beam.register_echo_agent("assistant")
    ack = await beam.invoke(text_request("assistant", "hi", stream=True))
    assert isinstance(ack, StreamAck)
    assert ack.subject == f"riverbeam.stream.{ack.request_id}"
    await beam.wait_idle()
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "Echo: hi"
    assert all(f.request_id == ack.request_id and f.session_id == ack.session_id for f in frames)
    # The done frame is published after the records are written, and carries the recorded result.
    run = await beam.get_run(frames[-1].run_id or "")
    assert run.status == "completed"
    assert run.result == frames[-1].result


async def test_unknown_agent_and_modality_are_refused_before_recording() -> None:
    beam = RiverBeam()
    beam.register_echo_agent("assistant")
    sid = str(uuid.uuid4())
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("nobody", "hi", sid))
    assert info.value.code is ErrorCode.AGENT_NOT_REGISTERED
    image = {
        "agent_name": "assistant",
        "session_id": sid,
        "content": [{"type": "image_url", "url": "http://x/y.png"}],
    }
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(image)
    assert info.value.code is ErrorCode.MODALITY_NOT_SUPPORTED
    with pytest.raises(RiverbeamError) as info:
        await beam.get_session(sid)
    assert info.value.code is ErrorCode.SESSION_NOT_FOUND


async def test_stream_without_done_fails_with_086() -> None:
    beam = RiverBeam()
    beam.register_agent(FramesAgent("quiet", [StreamChunk(type="thinking")]))
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("quiet", "hi"))
    assert info.value.code is ErrorCode.STREAM_WITHOUT_DONE
    run = await beam.get_run(info.value.details["run_id"])
    assert run.status == "failed" and run.error_code == "BEM-086"
    assert (await beam.get_interaction(run.interaction_id)).status == "failed"


async def test_error_frame_fails_with_087_and_is_the_last_frame() -> None:
    beam = RiverBeam()
    frames = [
        StreamChunk(type="thinking"),
        StreamChunk(type="error", error="boom", error_code="BEM-088"),
    ]
    beam.register_agent(FramesAgent("broken", frames))
    ack = await beam.invoke(text_request("broken", "hi", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    published = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert [f.type for f in published] == ["thinking", "error"]
    assert published[-1].error_code == "BEM-088"
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "failed" and run.error_code == "BEM-088"
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("broken", "again"))
    assert info.value.code is ErrorCode.AGENT_ERROR_FRAME
    assert info.value.details["agent_error_code"] == "BEM-088"


async def test_interrupt_then_approved_resume_runs_the_stored_call_once() -> None:
    beam, tools = author_beam(two_tools_then_push())
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "edit and push", sid))
    assert isinstance(first, AgentResult) and first.interrupted
    assert [c.tool_name for c in first.tool_calls] == ["a", "b"]
    (pending,) = first.action_required
    assert pending.tool == "push" and pending.args == {"v": "ref"}
    assert tools["push"].calls == []
    run = await beam.get_run(first.run_id or "")
    assert run.status == "interrupted"
    assert (await beam.get_interaction(first.interaction_id or "")).status == "in_progress"
    assert (await beam.get_action(pending.action_id)).status == "pending"

    # The payload names another tool and other args: they must be ignored.
    ack = await beam.resume(
        {
            "agent_name": "author",
            "session_id": sid,
            "interaction_id": first.interaction_id,
            "actions": [approval(pending.action_id, payload={"tool": "a", "args": {"v": "evil"}})],
        }
    )
    await beam.wait_idle()
    assert tools["push"].calls == [{"v": "ref"}]
    assert tools["a"].calls == [{"v": "1"}]
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "pushed, done"
    action = await beam.get_action(pending.action_id)
    assert (action.status, action.outcome) == ("resolved", "approved_ran")
    assert action.result == {"tool": "push", "got": "ref"}
    kinds = [(m.role, m.type) for m in await beam.list_messages(sid)]
    assert ("tool", "action_result") in kinds
    assert (await beam.get_interaction(first.interaction_id or "")).status == "completed"


async def test_declined_resume_runs_nothing() -> None:
    beam, tools = author_beam([*two_tools_then_push()[:2], Text("ok, not pushing")])
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "edit and push", sid))
    assert isinstance(first, AgentResult)
    (pending,) = first.action_required
    ack = await beam.resume(
        {
            "agent_name": "author",
            "session_id": sid,
            "interaction_id": first.interaction_id,
            "actions": [approval(pending.action_id, status="cancelled")],
        }
    )
    await beam.wait_idle()
    assert tools["push"].calls == []
    action = await beam.get_action(pending.action_id)
    assert (action.status, action.outcome) == ("cancelled", "declined")
    assert beam.sinks.frames(ack.request_id)[-1].type == "done"  # type: ignore[attr-defined]


async def test_twenty_concurrent_resumes_run_the_tool_once() -> None:
    beam, tools = author_beam(two_tools_then_push())
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "edit and push", sid))
    assert isinstance(first, AgentResult)
    (pending,) = first.action_required
    body = {"agent_name": "author", "session_id": sid, "interaction_id": first.interaction_id}
    outcomes = await asyncio.gather(
        *(beam.resume({**body, "actions": [approval(pending.action_id)]}) for _ in range(20)),
        return_exceptions=True,
    )
    await beam.wait_idle()
    wins = [o for o in outcomes if isinstance(o, StreamAck)]
    losses = [o for o in outcomes if isinstance(o, RiverbeamError)]
    assert len(wins) == 1 and len(losses) == 19
    assert {e.code for e in losses} == {ErrorCode.ACTION_NOT_PENDING}
    assert tools["push"].calls == [{"v": "ref"}]


async def test_resume_refusals() -> None:
    beam, _ = author_beam(two_tools_then_push())
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "edit and push", sid))
    assert isinstance(first, AgentResult)
    (pending,) = first.action_required
    _other, _ = author_beam([])
    body = {"agent_name": "author", "session_id": sid, "interaction_id": first.interaction_id}

    async def code_of(payload: dict[str, Any]) -> ErrorCode:
        with pytest.raises(RiverbeamError) as info:
            await beam.resume(payload)
        return info.value.code

    assert (
        await code_of({**body, "actions": [approval("not-a-uuid")]}) is ErrorCode.ACTION_ID_NOT_UUID
    )
    assert (
        await code_of({**body, "actions": [approval(str(uuid.uuid4()))]})
        is ErrorCode.ACTION_NOT_FOUND
    )
    wrong_session = {
        **body,
        "session_id": str(uuid.uuid4()),
        "actions": [approval(pending.action_id)],
    }
    assert await code_of(wrong_session) is ErrorCode.INTERACTION_NOT_RESUMABLE
    # An action of another interaction in the same session.
    second = await beam.invoke(text_request("author", "again", sid))
    assert isinstance(second, AgentResult) or True
    elsewhere = {
        **body,
        "interaction_id": str(uuid.uuid4()),
        "actions": [approval(pending.action_id)],
    }
    assert await code_of(elsewhere) is ErrorCode.INTERACTION_NOT_RESUMABLE
    with pytest.raises(RiverbeamError) as info:
        await beam.resume({**body, "actions": []})
    assert info.value.code is ErrorCode.RESUME_WITHOUT_ACTIONS
    # Nothing above touched the action.
    assert (await beam.get_action(pending.action_id)).status == "pending"


async def test_action_of_another_interaction_is_064() -> None:
    beam, _ = author_beam(two_tools_then_push() + two_tools_then_push())
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("author", "one", sid))
    assert isinstance(first, AgentResult)
    (pending,) = first.action_required
    # Resolve the first interaction's action, then a second interaction interrupts too.
    await beam.resume(
        {
            "agent_name": "author",
            "session_id": sid,
            "interaction_id": first.interaction_id,
            "actions": [approval(pending.action_id)],
        }
    )
    await beam.wait_idle()
    second = await beam.invoke(text_request("author", "two", sid))
    assert isinstance(second, AgentResult) and second.interrupted
    (pending2,) = second.action_required
    with pytest.raises(RiverbeamError) as info:
        await beam.resume(
            {
                "agent_name": "author",
                "session_id": sid,
                "interaction_id": first.interaction_id,
                "actions": [approval(pending2.action_id)],
            }
        )
    assert info.value.code is ErrorCode.ACTION_WRONG_INTERACTION


async def test_confirm_is_honoured_only_with_the_grant() -> None:
    beam, tools = author_beam(two_tools_then_push())
    plain = await beam.invoke(text_request("author", "go", metadata={"confirm": True}))
    assert isinstance(plain, AgentResult) and plain.interrupted
    assert tools["push"].calls == []
    beam, tools = author_beam(two_tools_then_push())
    granted = await beam.invoke(
        text_request("author", "go", str(uuid.uuid4()), metadata={"confirm": True}),
        grant=Grant(may_confirm=True),
    )
    assert isinstance(granted, AgentResult) and not granted.interrupted
    assert tools["push"].calls == [{"v": "ref"}]


async def test_cancel_mid_run_records_partial_result() -> None:
    slow = CountingTool("slow", delay_s=30)
    client = ScriptedClient([ToolCalls([PendingToolCall("slow", {"v": "x"})]), Text("never")])
    beam = RiverBeam()
    beam.register_agent(RigAgentRunner.new("worker", client, [slow], None))
    ack = await beam.invoke(text_request("worker", "work", stream=True))
    assert isinstance(ack, StreamAck)
    await asyncio.wait_for(slow.started.wait(), GUARD_S)
    assert await beam.cancel(ack.request_id, "user pressed stop")
    await asyncio.wait_for(beam.wait_idle(), GUARD_S)
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-033"
    run = await beam.get_run(ack.run_id or "")
    assert run.status == "cancelled" and run.error_code == "BEM-033"
    assert run.token_usage is not None
    assert (await beam.get_interaction(ack.interaction_id)).status == "cancelled"
    messages = await beam.list_messages(ack.session_id)
    cancelled = [m for m in messages if m.role == "tool"]
    assert (
        cancelled
        and cancelled[0].tool_name == "slow"
        and cancelled[0].tool_result == {"cancelled": True}
    )
    assert not await beam.cancel(ack.request_id)


async def test_second_invoke_on_busy_session_is_rejected_or_queued() -> None:
    hold = FramesAgent("hold", [StreamChunk(type="thinking")], hang=True)
    beam = RiverBeam()
    beam.register_agent(hold)
    beam.register_echo_agent("assistant")
    sid = str(uuid.uuid4())
    ack = await beam.invoke(text_request("hold", "busy", sid, stream=True))
    assert isinstance(ack, StreamAck)
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("assistant", "me too", sid))
    assert info.value.code is ErrorCode.SESSION_BUSY

    queued = RiverBeam(
        store=beam.store,
        options=PipelineOptions(busy_session_policy="queue", queue_timeout_s=GUARD_S),
    )
    queued.register_echo_agent("assistant")
    waiting = asyncio.create_task(queued.invoke(text_request("assistant", "after you", sid)))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await beam.cancel(ack.request_id)
    result = await asyncio.wait_for(waiting, GUARD_S)
    assert isinstance(result, AgentResult) and result.text == "Echo: after you"
    await beam.wait_idle()


async def test_memory_scopes_reach_the_context_and_remember_writes() -> None:
    seen: list[Any] = []

    class Peek(FramesAgent):
        async def stream(self, input: Any, context: Any) -> Any:  # type: ignore[override]
            seen.append(context)
            yield StreamChunk(type="done", result=AgentResult(agent_name="peek"))

    beam = RiverBeam()
    beam.register_agent(Peek("peek", []))
    await beam.memory_remember(scope_name="user", scope_id="u1", content="likes tea")
    await beam.invoke(
        text_request("peek", "hi", metadata={"memory_scopes": [{"name": "user", "id": "u1"}]})
    )
    (ctx,) = seen
    assert [m.content for m in ctx.memory] == ["likes tea"]
    assert ("user", "u1") in ctx.memory_scopes


async def test_history_excludes_the_current_turn() -> None:
    seen: list[Any] = []

    class Peek(FramesAgent):
        async def stream(self, input: Any, context: Any) -> Any:  # type: ignore[override]
            seen.append([m.text for m in context.history])
            yield StreamChunk(
                type="done",
                result=AgentResult(agent_name="peek", content=[ContentPart.of_text("ok")]),
            )

    beam = RiverBeam()
    beam.register_agent(Peek("peek", []))
    sid = str(uuid.uuid4())
    await beam.invoke(text_request("peek", "first", sid))
    await beam.invoke(text_request("peek", "second", sid))
    assert seen == [[], ["first", "ok"]]


async def test_lost_lease_is_reaped_with_an_error_frame() -> None:
    store = InMemoryStore()
    hold = FramesAgent(
        "hold", [StreamChunk(type="thinking", data=AgentMessage(role="ai"))], hang=True
    )
    dying = RiverBeam(store=store, options=PipelineOptions(runner_id="dying", lease_ttl_s=0.3))
    dying.register_agent(hold)
    ack = await dying.invoke(text_request("hold", "work", stream=True))
    assert isinstance(ack, StreamAck)
    await asyncio.sleep(0.05)
    # The dying runner stops renewing (as if killed): stop its lease keeper only.
    keepers = [live.lease for live in dying.pipeline._live.values() if live.lease is not None]
    assert len(keepers) == 1 and keepers[0].running
    keepers[0].stop()
    await asyncio.sleep(0.5)
    from riverbeam.runtime import reap_once

    reaped = await reap_once(store, dying.sinks)
    assert reaped == 1
    run = await store.get_run(run_id=ack.run_id or "")
    assert run.status == "failed" and run.error_code == "BEM-034"
    frames = dying.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-034"
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    await dying.cancel(ack.request_id)
    await dying.wait_idle()


async def test_malformed_memory_scope_records_nothing() -> None:
    beam = RiverBeam()
    beam.register_echo_agent("assistant")
    sid = str(uuid.uuid4())
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(text_request("assistant", "hi", sid, metadata={"memory_scopes": ["bad"]}))
    assert info.value.code is ErrorCode.INVALID_MEMORY_SCOPE
    with pytest.raises(RiverbeamError):
        await beam.get_session(sid)


async def test_context_failure_ends_the_run_failed() -> None:
    class BrokenRecall(InMemoryStore):
        async def recall(self, **kwargs: Any) -> Any:
            raise RiverbeamError(ErrorCode.STORE_UNAVAILABLE, "memory down")

    beam = RiverBeam(store=BrokenRecall())
    beam.register_echo_agent("assistant")
    request = text_request(
        "assistant", "hi", metadata={"memory_scopes": [{"name": "u", "id": "1"}]}
    )
    with pytest.raises(RiverbeamError) as info:
        await beam.invoke(request)
    assert info.value.code is ErrorCode.STORE_UNAVAILABLE
    run = await beam.get_run(info.value.details["run_id"])
    assert run.status == "failed" and run.error_code == "BEM-120"


async def test_every_log_line_of_a_run_carries_its_ids(caplog: pytest.LogCaptureFixture) -> None:
    import json
    import logging

    from riverbeam.server import JsonFormatter, LogContextFilter

    class Chatty(FramesAgent):
        async def stream(self, input: Any, context: Any) -> Any:  # type: ignore[override]
            logging.getLogger("my.agent").warning("working on it")
            yield StreamChunk(type="done", result=AgentResult(agent_name="chatty"))

    beam = RiverBeam()
    beam.register_agent(Chatty("chatty", []))
    caplog.handler.addFilter(LogContextFilter())
    with caplog.at_level(logging.WARNING, logger="my.agent"):
        result = await beam.invoke(text_request("chatty", "hi"))
    assert isinstance(result, AgentResult)
    (record,) = [r for r in caplog.records if r.name == "my.agent"]
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == result.request_id
    assert line["run_id"] == result.run_id
    assert line["session_id"] == result.session_id


def test_the_facade_is_riverbeam_riverbeam() -> None:
    import riverbeam

    assert riverbeam.RiverBeam is RiverBeam
