"""A handoff target's approval in the handed turn through the router (real gRPC and
NATS): the interaction pauses with the target's own held call in the ordinary inbox, and
answering it resumes the target exactly once."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from riverbeam.agents import (
    HandoffTool,
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
    refund = CountingTool("refund", confirm=True)
    billing = ScriptedClient(
        [ToolCalls([PendingToolCall("refund", {"v": "12"}, id="b1")]), Text("Refunded 12.")]
    )
    stack.beam.register_agent(RigAgentRunner.new("billing", billing, [refund], None))
    triage = ScriptedClient([ToolCalls([PendingToolCall("transfer_to_billing", {}, id="t1")])])
    stack.beam.register_agent(
        RigAgentRunner.new("triage", triage, [HandoffTool(stack.beam.registry(), "billing")], None)
    )
    return refund


async def test_a_targets_approval_pauses_the_interaction_and_resumes_it_once(
    stack: Stack,
) -> None:
    refund = _register(stack)
    alice = stack.client("alice")
    paused = await alice.invoke("triage", "refund me", session_id=str(uuid.uuid4()))
    assert isinstance(paused, AgentResult) and paused.interrupted
    assert paused.session_id and paused.interaction_id and paused.run_id
    assert paused.handoff_to == "billing"
    (held,) = paused.action_required
    assert (held.tool, held.args, held.child) == ("refund", {"v": "12"}, None)
    assert refund.calls == []
    runs = await stack.store.list_runs(interaction_id=paused.interaction_id)
    assert sorted((r.agent_name, r.status, r.parent_run_id == paused.run_id) for r in runs) == [
        ("billing", "interrupted", True),
        ("triage", "interrupted", False),
    ]
    (pending,) = await alice.list_pending_actions()
    assert (pending.action_id, pending.tool, pending.child) == (held.action_id, "refund", None)

    ack = await alice.approve(paused.session_id, paused.interaction_id, action_id=held.action_id)
    frames = await collect(alice.follow(ack.request_id))
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    assert done.result.text == "Refunded 12." and not done.result.interrupted
    assert refund.calls == [{"v": "12"}]
    resumed = await stack.store.get_run(run_id=ack.run_id or "")
    assert (resumed.agent_name, resumed.status, resumed.parent_run_id) == (
        "billing",
        "completed",
        None,
    )
    assert await alice.list_pending_actions() == []
    # The client named the agent of the action (the handing-off run's): the router sent the
    # resume to the agent the conversation was handed to.
    assert pending.agent_name == "triage"

    # Answering it again is refused and runs nothing.
    with pytest.raises(RiverbeamError) as info:
        await alice.approve(paused.session_id, paused.interaction_id, action_id=held.action_id)
    assert info.value.code is ErrorCode.ACTION_NOT_PENDING
    assert refund.calls == [{"v": "12"}]


async def test_concurrent_approvals_of_a_targets_call_run_it_once(stack: Stack) -> None:
    refund = _register(stack)
    alice = stack.client("alice")
    paused = await alice.invoke("triage", "refund me", session_id=str(uuid.uuid4()))
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
    assert frames[-1].result.text == "Refunded 12."
    assert refund.calls == [{"v": "12"}]
