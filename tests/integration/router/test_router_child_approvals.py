"""An approval inside a called agent through the router (real gRPC, NATS, Postgres): the
caller's run pauses with the child's held call in the ordinary inbox, and answering it
resumes the tree exactly once."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from riverbeam.agents import (
    AgentTool,
    PendingToolCall,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, StreamAck
from tests.integration.router.router_kit import Stack, collect
from tests.unit.runtime.runtime_kit import CountingTool

pytestmark = pytest.mark.nats


def _register(stack: Stack) -> CountingTool:
    push = CountingTool("ship", confirm=True)
    helper = ScriptedClient(
        [ToolCalls([PendingToolCall("ship", {"v": "main"}, id="h1")]), Text("Shipped main.")]
    )
    stack.beam.register_agent(RigAgentRunner.new("helper", helper, [push], None))
    lead = ScriptedClient(
        [
            ToolCalls([PendingToolCall("ask_helper", {"task": "ship it"}, id="p1")]),
            Text("The helper shipped it."),
        ]
    )
    stack.beam.register_agent(
        RigAgentRunner.new("lead", lead, [AgentTool(stack.beam.registry(), "helper")], None)
    )
    return push


async def test_an_approval_in_a_child_pauses_the_tree_and_resumes_it_once(stack: Stack) -> None:
    push = _register(stack)
    alice = stack.client("alice")
    paused = await alice.invoke("lead", "ship it", session_id=str(uuid.uuid4()))
    assert isinstance(paused, AgentResult) and paused.interrupted
    assert paused.session_id and paused.interaction_id and paused.run_id
    (held,) = paused.action_required
    assert (held.tool, held.args) == ("ship", {"v": "main"})
    assert held.child is not None and held.child["agent"] == "helper"
    assert held.child["parent_tool_call_id"] == "p1"
    assert push.calls == []
    # Both runs are interrupted in Postgres; the held call is in the ordinary inbox.
    runs = await stack.store.list_runs(interaction_id=paused.interaction_id)
    assert sorted((r.status, r.parent_run_id == paused.run_id) for r in runs) == [
        ("interrupted", False),
        ("interrupted", True),
    ]
    (pending,) = await alice.list_pending_actions()
    assert (pending.action_id, pending.tool) == (held.action_id, "ship")
    assert pending.child is not None
    assert (pending.child["agent"], pending.child["parent_tool"]) == ("helper", "ask_helper")

    ack = await alice.approve(paused.session_id, paused.interaction_id, action_id=held.action_id)
    frames = await collect(alice.follow(ack.request_id))
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    assert done.result.text == "The helper shipped it." and not done.result.interrupted
    assert done.result.tool_calls[0].result["answer"] == "Shipped main."
    assert push.calls == [{"v": "main"}]
    # The child's frames are on the resumed run's stream, marked; a new child run is linked.
    child_frames = [f for f in frames if f.parent_run_id == ack.run_id]
    assert child_frames and {f.agent_name for f in child_frames} == {"helper"}
    runs = await stack.store.list_runs(interaction_id=paused.interaction_id)
    [resumed_child] = [r for r in runs if r.parent_run_id == ack.run_id]
    assert (resumed_child.agent_name, resumed_child.status) == ("helper", "completed")
    assert await alice.list_pending_actions() == []

    # Answering it again is refused and runs nothing.
    with pytest.raises(RiverbeamError) as info:
        await alice.approve(paused.session_id, paused.interaction_id, action_id=held.action_id)
    assert info.value.code is ErrorCode.ACTION_NOT_PENDING
    assert push.calls == [{"v": "main"}]


async def test_concurrent_approvals_of_a_childs_call_run_it_once(stack: Stack) -> None:
    push = _register(stack)
    alice = stack.client("alice")
    paused = await alice.invoke("lead", "ship it", session_id=str(uuid.uuid4()))
    assert isinstance(paused, AgentResult) and paused.session_id and paused.interaction_id
    (held,) = paused.action_required
    outcomes = await asyncio.gather(
        *(
            alice.approve(paused.session_id, paused.interaction_id, action_id=held.action_id)
            for _ in range(5)
        ),
        return_exceptions=True,
    )
    wins = [o for o in outcomes if isinstance(o, StreamAck)]
    losses = [o for o in outcomes if isinstance(o, RiverbeamError)]
    assert len(wins) == 1 and len(losses) == 4, outcomes
    assert {e.code for e in losses} <= {ErrorCode.ACTION_NOT_PENDING, ErrorCode.SESSION_BUSY}
    frames = await collect(alice.follow(wins[0].request_id))
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "The helper shipped it."
    assert push.calls == [{"v": "main"}]
