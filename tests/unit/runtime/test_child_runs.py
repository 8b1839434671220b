"""An agent called by another agent runs as a child run of the caller's run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from riverbeam.agents import (
    AgentContext,
    AgentInput,
    AgentTool,
    Crew,
    FrameFactory,
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.runtime import RiverBeam
from riverbeam.runtime._facade import MemorySinks
from riverbeam.types import AgentMetadata, AgentResult, StreamAck, StreamChunk, TokenUsage
from tests.unit.runtime.runtime_kit import CountingTool, text_request

LEAD = TokenUsage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
HELPER = TokenUsage(prompt_tokens=3, completion_tokens=1, total_tokens=4)


def _beam(helper_steps: list[object], *, helper_tools: list[object] | None = None) -> RiverBeam:
    beam = RiverBeam()
    beam.register_agent(
        RigAgentRunner.new(
            "helper",
            ScriptedClient(helper_steps),  # type: ignore[arg-type]
            helper_tools if helper_tools is not None else [CountingTool("look")],  # type: ignore[arg-type]
            None,
        )
    )
    lead = ScriptedClient(
        [
            ToolCalls([PendingToolCall("ask_helper", {"task": "find it"})], usage=LEAD),
            Text("The helper says 42.", usage=LEAD),
        ]
    )
    beam.register_agent(
        RigAgentRunner.new(
            "lead",
            lead,
            [AgentTool(beam.registry(), "helper")],
            None,
            options=RigOptions(tool_errors="model"),
        )
    )
    return beam


async def test_the_called_agent_has_its_own_run_record_linked_to_the_callers() -> None:
    beam = _beam(
        [ToolCalls([PendingToolCall("look", {"v": "x"})], usage=HELPER), Text("42", usage=HELPER)]
    )
    result = await beam.invoke(text_request("lead", "what is it?"))
    assert isinstance(result, AgentResult) and result.text == "The helper says 42."
    parent = await beam.get_run(result.run_id or "")
    runs = await beam.store.list_runs(interaction_id=parent.interaction_id)
    [child] = [r for r in runs if r.parent_run_id == parent.run_id]
    assert (child.agent_name, child.status, child.session_id) == (
        "helper",
        "completed",
        parent.session_id,
    )
    assert child.result is not None and child.result.text == "42"
    assert [c.tool_name for c in child.result.tool_calls] == ["look"]
    # The child's tokens are its own, and added to the caller's.
    assert child.token_usage is not None and child.token_usage.total_tokens == 8
    assert parent.token_usage is not None and parent.token_usage.total_tokens == 30 + 8
    # The child's messages are not in the session's conversation.
    messages = await beam.list_messages(parent.session_id)
    assert [m.role for m in messages] == ["human", "tool", "ai"]
    assert all(m.run_id == parent.run_id for m in messages)


async def test_the_child_frames_are_on_the_callers_stream_marked_with_the_child() -> None:
    beam = _beam(
        [ToolCalls([PendingToolCall("look", {"v": "x"})], usage=HELPER), Text("42", usage=HELPER)]
    )
    ack = await beam.invoke(text_request("lead", "what is it?", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    sinks = beam.sinks
    assert isinstance(sinks, MemorySinks)
    frames = sinks.frames(ack.request_id)
    child = [f for f in frames if f.parent_run_id is not None]
    assert child, "no frame of the child on the caller's stream"
    assert {f.parent_run_id for f in child} == {ack.run_id}
    assert {f.agent_name for f in child} == {"helper"}
    [child_run_id] = {f.run_id for f in child}
    assert child_run_id != ack.run_id
    assert {f.request_id for f in child} == {ack.request_id}
    # The child's tool call and its answer text are among them; no terminal frame of its own.
    assert any(f.type == "tool" and f.data and f.data.tool_name == "look" for f in child)
    assert any(f.type == "chunk" and f.data and f.data.text == "42" for f in child)
    assert not any(f.is_terminal for f in child)
    # One stream, numbered in order, ending with the caller's done frame.
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert frames[-1].type == "done" and frames[-1].parent_run_id is None
    # The child's frames sit between the caller's call of ask_helper and its result.
    names = [(f.type, f.data.tool_name if f.data else None, f.parent_run_id) for f in frames]
    call = names.index(("tool", "ask_helper", None))
    first_child = next(i for i, n in enumerate(names) if n[2] is not None)
    assert call < first_child


async def test_a_failed_child_is_recorded_failed_and_the_caller_goes_on() -> None:
    # The helper calls a tool it does not have (BEM-089, fatal): its run fails.
    beam = _beam([ToolCalls([PendingToolCall("nope", {})], usage=HELPER)], helper_tools=[])
    result = await beam.invoke(text_request("lead", "x"))
    assert isinstance(result, AgentResult) and result.text == "The helper says 42."
    parent = await beam.get_run(result.run_id or "")
    runs = await beam.store.list_runs(interaction_id=parent.interaction_id)
    [child] = [r for r in runs if r.parent_run_id]
    assert child.status == "failed" and child.error_code == "BEM-087"
    assert child.token_usage is not None and child.token_usage.total_tokens == 4


async def test_approval_inside_a_child_pauses_the_caller_and_the_child() -> None:
    # It used to be refused (BEM-235); test_child_approvals.py covers the resume.
    beam = _beam(
        [ToolCalls([PendingToolCall("push", {"v": "main"})], usage=HELPER)],
        helper_tools=[CountingTool("push", confirm=True)],
    )
    result = await beam.invoke(text_request("lead", "x"))
    assert isinstance(result, AgentResult) and result.interrupted
    assert result.tool_calls == []  # the call of the helper waits, it has no result yet
    (held,) = result.action_required
    assert held.tool == "push" and held.child is not None
    parent = await beam.get_run(result.run_id or "")
    assert parent.status == "interrupted"
    runs = await beam.store.list_runs(interaction_id=parent.interaction_id)
    [child] = [r for r in runs if r.parent_run_id]
    assert (child.status, child.error_code) == ("interrupted", None)
    assert child.token_usage is not None and child.token_usage.total_tokens == 4
    # The held call waits in the inbox, to be answered through the ordinary resume.
    pending, _ = await beam.store.list_pending_actions(session_id=parent.session_id)
    assert [a.action_id for a in pending] == [held.action_id]


async def test_every_crew_step_is_a_child_run_of_the_crew_run() -> None:
    beam = RiverBeam()
    for name, answer in (("a", "first"), ("b", "second")):
        beam.register_agent(
            RigAgentRunner.new(name, ScriptedClient([Text(answer, usage=HELPER)]), [], None)
        )
    beam.register_agent(Crew("pair", "sequential", beam.registry(), agents=["a", "b"]))
    result = await beam.invoke(text_request("pair", "go"))
    assert isinstance(result, AgentResult) and result.text == "second"
    parent = await beam.get_run(result.run_id or "")
    runs = await beam.store.list_runs(interaction_id=parent.interaction_id)
    children = [r for r in runs if r.parent_run_id == parent.run_id]
    assert [(r.agent_name, r.status) for r in children] == [
        ("a", "completed"),
        ("b", "completed"),
    ]
    assert parent.token_usage is not None and parent.token_usage.total_tokens == 8


class _Stuck:
    """Starts, says so, then never answers."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    def metadata(self) -> AgentMetadata:
        return AgentMetadata(name="stuck")

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        yield FrameFactory.for_input("stuck", input).chunk("working")
        self.started.set()
        await asyncio.Event().wait()

    async def health_check(self) -> bool:
        return True


async def test_a_cancelled_caller_records_its_running_child_as_cancelled() -> None:
    beam = RiverBeam()
    stuck = _Stuck()
    beam.register_agent(stuck)
    beam.register_agent(
        RigAgentRunner.new(
            "lead",
            ScriptedClient([ToolCalls([PendingToolCall("ask_stuck", {"task": "t"})])]),
            [AgentTool(beam.registry(), "stuck")],
            None,
        )
    )
    ack = await beam.invoke(text_request("lead", "go", stream=True))
    assert isinstance(ack, StreamAck)
    await stuck.started.wait()
    assert await beam.cancel(ack.request_id, "stop")
    await beam.wait_idle()
    parent = await beam.get_run(ack.run_id or "")
    assert parent.status == "cancelled"
    runs = await beam.store.list_runs(interaction_id=parent.interaction_id)
    [child] = [r for r in runs if r.parent_run_id == parent.run_id]
    assert child.status == "cancelled" and child.finished_at is not None
