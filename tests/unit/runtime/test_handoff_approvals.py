"""A handoff target that stops for approval in the handed turn pauses the interaction; the
person's answer is an ordinary resume of the target, run once."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from riverbeam.agents import (
    AgentInput,
    HandoffTool,
    PendingToolCall,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import RiverBeam
from riverbeam.types import AgentResult, StreamAck
from tests.unit.runtime.runtime_kit import CountingTool, approval, text_request


class PreviewedRefund(CountingTool):
    """A confirm-required tool with a preview of what an approval covers."""

    def __init__(self) -> None:
        super().__init__("refund", confirm=True)

    async def approval_args(self, args: dict[str, Any], input: AgentInput) -> dict[str, Any]:
        return dict(args)

    async def approval_preview(
        self, args: dict[str, Any], input: AgentInput
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        return dict(args), {"tool": "refund", "summary": f"refund {args['v']} EUR"}


def _beam(after: str = "Refunded.") -> tuple[RiverBeam, PreviewedRefund, CountingTool, Any]:
    beam = RiverBeam()
    refund = PreviewedRefund()
    look = CountingTool("look")
    billing = ScriptedClient(
        [
            ToolCalls([PendingToolCall("look", {"v": "invoice"}, id="b1")]),
            ToolCalls([PendingToolCall("refund", {"v": "12"}, id="b2")]),
            Text(after),
        ]
    )
    beam.register_agent(RigAgentRunner.new("billing", billing, [refund, look], None))
    triage = ScriptedClient(
        [ToolCalls([PendingToolCall("transfer_to_billing", {"reason": "money"}, id="t1")])]
    )
    beam.register_agent(
        RigAgentRunner.new("triage", triage, [HandoffTool(beam.registry(), "billing")], None)
    )
    return beam, refund, look, billing


async def _paused(beam: RiverBeam, sid: str) -> AgentResult:
    first = await beam.invoke(text_request("triage", "refund my invoice", sid))
    assert isinstance(first, AgentResult)
    return first


def _resume(first: AgentResult, sid: str, *actions: dict[str, object]) -> dict[str, object]:
    # The caller names the agent it started with: the interaction is the target's.
    return {
        "agent_name": "triage",
        "session_id": sid,
        "interaction_id": first.interaction_id,
        "actions": list(actions),
    }


async def test_the_handing_off_run_pauses_with_the_targets_own_held_call() -> None:
    beam, refund, look, _ = _beam()
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    assert first.interrupted and first.handoff_to == "billing"
    assert refund.calls == [] and look.calls == [{"v": "invoice"}]
    (pending,) = first.action_required
    assert (pending.tool, pending.args, pending.tool_call_id) == ("refund", {"v": "12"}, "b2")
    assert pending.child is None  # the target's own call, not a called agent's
    assert pending.preview is not None and pending.preview.summary == "refund 12 EUR"
    assert first.metadata is not None and first.metadata["handoff"]["held"] is True
    runs = await beam.store.list_runs(interaction_id=first.interaction_id)
    [source] = [r for r in runs if r.parent_run_id is None]
    [target] = [r for r in runs if r.parent_run_id == source.run_id]
    assert (source.agent_name, source.status) == ("triage", "interrupted")
    assert (target.agent_name, target.status) == ("billing", "interrupted")
    assert first.metadata["handoff"]["run_id"] == target.run_id
    interaction = await beam.get_interaction(first.interaction_id or "")
    assert interaction.agent_name == "billing"
    stored = await beam.get_action(pending.action_id)
    assert (stored.status, stored.tool, stored.args, stored.child) == (
        "pending",
        "refund",
        {"v": "12"},
        None,
    )
    assert stored.preview is not None and stored.preview.summary == "refund 12 EUR"


async def test_approving_runs_the_call_once_and_the_target_continues() -> None:
    beam, refund, _, billing = _beam()
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (pending,) = first.action_required
    # The payload's tool and args are not the stored ones: they must be ignored.
    evil = approval(pending.action_id, payload={"tool": "look", "args": {"v": "evil"}})
    ack = await beam.resume(_resume(first, sid, evil))
    await beam.wait_idle()
    assert refund.calls == [{"v": "12"}]
    done = beam.sinks.frames(ack.request_id)[-1]  # type: ignore[attr-defined]
    assert done.type == "done" and done.result is not None
    assert done.result.text == "Refunded." and not done.result.interrupted
    run = await beam.get_run(ack.run_id or "")
    assert (run.agent_name, run.status, run.parent_run_id) == ("billing", "completed", None)
    # The target's model saw the approved call's result.
    last = billing.calls[-1].messages
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "b2"
    assert '"got": "12"' in last[-1]["content"]
    action = await beam.get_action(pending.action_id)
    assert (action.status, action.outcome) == ("resolved", "approved_ran")
    assert action.result == {"tool": "refund", "got": "12"}
    assert (await beam.get_interaction(first.interaction_id or "")).status == "completed"
    # A second answer is refused and nothing runs again.
    try:
        await beam.resume(_resume(first, sid, approval(pending.action_id)))
    except RiverbeamError as err:
        assert err.code is ErrorCode.ACTION_NOT_PENDING
    else:
        raise AssertionError("a second answer should be refused")
    assert refund.calls == [{"v": "12"}]


async def test_declining_tells_the_target_and_runs_nothing() -> None:
    beam, refund, _, billing = _beam("No refund then.")
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (pending,) = first.action_required
    ack = await beam.resume(_resume(first, sid, approval(pending.action_id, status="cancelled")))
    await beam.wait_idle()
    assert refund.calls == []
    told = billing.calls[-1].messages[-1]
    assert told["role"] == "tool" and '"declined": true' in told["content"]
    done = beam.sinks.frames(ack.request_id)[-1]  # type: ignore[attr-defined]
    assert done.result.text == "No refund then."
    action = await beam.get_action(pending.action_id)
    assert (action.status, action.outcome) == ("cancelled", "declined")


async def test_concurrent_approvals_resume_the_target_once() -> None:
    beam, refund, _, _ = _beam()
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (pending,) = first.action_required
    outcomes = await asyncio.gather(
        *(beam.resume(_resume(first, sid, approval(pending.action_id))) for _ in range(10)),
        return_exceptions=True,
    )
    await beam.wait_idle()
    wins = [o for o in outcomes if isinstance(o, StreamAck)]
    losses = [o for o in outcomes if isinstance(o, RiverbeamError)]
    assert len(wins) == 1 and len(losses) == 9
    assert {e.code for e in losses} == {ErrorCode.ACTION_NOT_PENDING}
    assert refund.calls == [{"v": "12"}]


async def test_the_target_resumes_from_its_own_calls_of_the_turn_once() -> None:
    # A session with an earlier turn: the resumed target sees every answered call once.
    beam = RiverBeam()
    refund = CountingTool("refund", confirm=True)
    billing = ScriptedClient(
        [
            ToolCalls([PendingToolCall("look", {"v": "invoice"}, id="b1")]),
            ToolCalls([PendingToolCall("refund", {"v": "12"}, id="b2")]),
            Text("Refunded."),
        ]
    )
    beam.register_agent(
        RigAgentRunner.new("billing", billing, [refund, CountingTool("look")], None)
    )
    triage = ScriptedClient(
        [
            ToolCalls([PendingToolCall("look", {"v": "account"}, id="a0")]),
            Text("Hello."),
            ToolCalls([PendingToolCall("transfer_to_billing", {}, id="t1")]),
        ]
    )
    tools = [HandoffTool(beam.registry(), "billing"), CountingTool("look")]
    beam.register_agent(RigAgentRunner.new("triage", triage, tools, None))
    sid = str(uuid.uuid4())
    hello = await beam.invoke(text_request("triage", "hi", sid))
    assert isinstance(hello, AgentResult) and hello.text == "Hello."
    first = await _paused(beam, sid)
    assert first.interrupted and [c.tool_call_id for c in first.tool_calls] == ["t1", "b1"]
    (pending,) = first.action_required
    await beam.resume(_resume(first, sid, approval(pending.action_id)))
    await beam.wait_idle()
    assert refund.calls == [{"v": "12"}]
    seen = [m.get("tool_call_id") for m in billing.calls[-1].messages if m["role"] == "tool"]
    assert seen == ["a0", "t1", "b1", "b2"]
