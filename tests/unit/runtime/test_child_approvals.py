"""An approval inside a called agent pauses the whole tree; answering it resumes it once."""

from __future__ import annotations

import asyncio
import uuid

from riverbeam.agents import (
    AgentTool,
    Crew,
    HandoffTool,
    PendingToolCall,
    RigAgentRunner,
    ScriptedClient,
    Text,
    ToolCalls,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import RiverBeam
from riverbeam.types import AgentResult, StreamAck, StreamChunk
from tests.unit.runtime.runtime_kit import CountingTool, approval, text_request


def _beam(
    helper_steps: list[object], lead_steps: list[object]
) -> tuple[RiverBeam, CountingTool, ScriptedClient, ScriptedClient]:
    beam = RiverBeam()
    push = CountingTool("push", confirm=True)
    helper = ScriptedClient(helper_steps)  # type: ignore[arg-type]
    lead = ScriptedClient(lead_steps)  # type: ignore[arg-type]
    beam.register_agent(RigAgentRunner.new("helper", helper, [push, CountingTool("look")], None))
    beam.register_agent(
        RigAgentRunner.new("lead", lead, [AgentTool(beam.registry(), "helper")], None)
    )
    return beam, push, helper, lead


def _pushing_helper(after: str = "Pushed main.") -> list[object]:
    return [
        ToolCalls([PendingToolCall("look", {"v": "repo"}, id="h1")]),
        ToolCalls([PendingToolCall("push", {"v": "main"}, id="h2")]),
        Text(after),
    ]


def _lead(final: str = "The helper pushed.") -> list[object]:
    return [
        ToolCalls([PendingToolCall("ask_helper", {"task": "push it"}, id="p1")]),
        Text(final),
    ]


async def _paused(beam: RiverBeam, sid: str) -> AgentResult:
    first = await beam.invoke(text_request("lead", "ship it", sid))
    assert isinstance(first, AgentResult)
    return first


def _resume(first: AgentResult, sid: str, *actions: dict[str, object]) -> dict[str, object]:
    return {
        "agent_name": "lead",
        "session_id": sid,
        "interaction_id": first.interaction_id,
        "actions": list(actions),
    }


async def test_the_callers_run_pauses_with_the_childs_held_call() -> None:
    beam, push, _, _ = _beam(_pushing_helper(), _lead())
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    assert first.interrupted and push.calls == []
    assert first.text == "Waiting for approval to run: push."
    (pending,) = first.action_required
    assert (pending.tool, pending.args, pending.tool_call_id) == ("push", {"v": "main"}, "h2")
    assert pending.child is not None
    assert pending.child["agent"] == "helper"
    assert pending.child["parent_tool"] == "ask_helper"
    assert pending.child["parent_tool_call_id"] == "p1"
    lead_run = await beam.get_run(first.run_id or "")
    assert lead_run.status == "interrupted"
    runs = await beam.store.list_runs(interaction_id=first.interaction_id)
    [child] = [r for r in runs if r.parent_run_id == first.run_id]
    assert child.status == "interrupted" and child.run_id == pending.child["run_id"]
    # The person sees it in the ordinary inbox.
    stored = await beam.get_action(pending.action_id)
    assert (stored.status, stored.tool, stored.args) == ("pending", "push", {"v": "main"})
    # The stored action says which call it belongs to (the conversation stays in the reply).
    assert stored.child == {
        "agent": "helper",
        "run_id": child.run_id,
        "parent_tool": "ask_helper",
        "parent_tool_call_id": "p1",
    }
    # The state to continue the child is in the reply written by the same finish step.
    [reply] = [m for m in await beam.list_messages(sid) if m.role == "ai"]
    [entry] = (reply.metadata or {})["action_required"]
    assert entry["action_id"] == pending.action_id
    assert entry["child"]["history"][0]["role"] == "human"


async def test_approving_runs_the_childs_call_once_and_the_caller_completes() -> None:
    beam, push, helper, lead = _beam(_pushing_helper(), _lead())
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (pending,) = first.action_required
    # The payload's tool and args are not the stored ones: they must be ignored.
    evil = approval(pending.action_id, payload={"tool": "look", "args": {"v": "evil"}})
    ack = await beam.resume(_resume(first, sid, evil))
    await beam.wait_idle()
    assert push.calls == [{"v": "main"}]
    frames: list[StreamChunk] = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    assert done.result.text == "The helper pushed." and not done.result.interrupted
    (call,) = done.result.tool_calls
    assert (call.tool_name, call.tool_call_id) == ("ask_helper", "p1")
    assert call.result["answer"] == "Pushed main."
    # The child's model saw its conversation and the approved call's result.
    last = helper.calls[-1].messages
    assert last[0] == {"role": "user", "content": "push it"}
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "h2"
    assert '"got": "main"' in last[-1]["content"]
    # The caller's model saw its own call answered by the child's answer.
    assert lead.calls[-1].messages[-1]["tool_call_id"] == "p1"
    assert "Pushed main." in lead.calls[-1].messages[-1]["content"]
    # The child's frames are on the resumed run's stream, marked with the child's run.
    resumed_run = done.result.run_id
    children = [f for f in frames if f.parent_run_id == resumed_run]
    assert children and all(f.agent_name == "helper" for f in children)
    runs = await beam.store.list_runs(interaction_id=first.interaction_id)
    statuses = sorted((r.status, r.parent_run_id is not None) for r in runs)
    # The first lead run and its child stay interrupted; the resumed lead run and the new
    # child run linked to it completed.
    assert statuses == [
        ("completed", False),
        ("completed", True),
        ("interrupted", False),
        ("interrupted", True),
    ]
    [new_child] = [r for r in runs if r.parent_run_id == resumed_run]
    assert new_child.agent_name == "helper" and new_child.status == "completed"
    assert (await beam.get_interaction(first.interaction_id or "")).status == "completed"
    action = await beam.get_action(pending.action_id)
    # The approval ledger records what the child's call did.
    assert (action.status, action.outcome) == ("resolved", "approved_ran")
    assert action.result == {"tool": "push", "got": "main"}


async def test_declining_tells_the_childs_model_and_runs_nothing() -> None:
    beam, push, helper, _ = _beam(_pushing_helper("Not pushing."), _lead("Nothing pushed."))
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (pending,) = first.action_required
    ack = await beam.resume(_resume(first, sid, approval(pending.action_id, status="cancelled")))
    await beam.wait_idle()
    assert push.calls == []
    told = helper.calls[-1].messages[-1]
    assert told["role"] == "tool" and '"declined": true' in told["content"]
    done = beam.sinks.frames(ack.request_id)[-1]  # type: ignore[attr-defined]
    assert done.result.text == "Nothing pushed."
    assert done.result.tool_calls[0].result["answer"] == "Not pushing."
    action = await beam.get_action(pending.action_id)
    assert (action.status, action.outcome) == ("cancelled", "declined")


async def test_concurrent_approvals_resume_the_tree_once() -> None:
    beam, push, _, _ = _beam(_pushing_helper(), _lead())
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
    assert push.calls == [{"v": "main"}]


async def test_a_child_that_pauses_again_pauses_the_caller_again() -> None:
    helper_steps: list[object] = [
        ToolCalls([PendingToolCall("push", {"v": "one"}, id="h1")]),
        ToolCalls([PendingToolCall("push", {"v": "two"}, id="h2")]),
        Text("Pushed both."),
    ]
    beam, push, _, _ = _beam(helper_steps, _lead("Both pushed."))
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (one,) = first.action_required
    ack = await beam.resume(_resume(first, sid, approval(one.action_id)))
    await beam.wait_idle()
    second = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert second.interrupted and push.calls == [{"v": "one"}]
    (two,) = second.action_required
    assert two.args == {"v": "two"} and two.child is not None
    assert two.child["parent_tool_call_id"] == "p1"
    ack = await beam.resume(_resume(first, sid, approval(two.action_id)))
    await beam.wait_idle()
    done = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert done.text == "Both pushed." and not done.interrupted
    assert push.calls == [{"v": "one"}, {"v": "two"}]
    assert done.tool_calls[0].result["answer"] == "Pushed both."


async def test_a_grandchilds_approval_resumes_through_the_child() -> None:
    beam = RiverBeam()
    push = CountingTool("push", confirm=True)
    leaf = ScriptedClient([ToolCalls([PendingToolCall("push", {"v": "x"}, id="g1")]), Text("ok")])
    beam.register_agent(RigAgentRunner.new("leaf", leaf, [push], None))
    middle = ScriptedClient(
        [ToolCalls([PendingToolCall("ask_leaf", {"task": "t"}, id="m1")]), Text("leaf ok")]
    )
    beam.register_agent(
        RigAgentRunner.new("middle", middle, [AgentTool(beam.registry(), "leaf")], None)
    )
    top = ScriptedClient(
        [ToolCalls([PendingToolCall("ask_middle", {"task": "t"}, id="t1")]), Text("all ok")]
    )
    beam.register_agent(
        RigAgentRunner.new("lead", top, [AgentTool(beam.registry(), "middle")], None)
    )
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (pending,) = first.action_required
    assert pending.tool == "push" and pending.child is not None
    assert pending.child["agent"] == "middle"
    ack = await beam.resume(_resume(first, sid, approval(pending.action_id)))
    await beam.wait_idle()
    done = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert done.text == "all ok" and push.calls == [{"v": "x"}]
    action = await beam.get_action(pending.action_id)
    assert (action.outcome, action.result) == ("approved_ran", {"tool": "push", "got": "x"})
    assert done.tool_calls[0].result["answer"] == "leaf ok"


def _crew_beam(kind: str) -> tuple[RiverBeam, CountingTool, CountingTool]:
    beam = RiverBeam()
    first, second = CountingTool("push", confirm=True), CountingTool("tag", confirm=True)
    drafter = ScriptedClient(
        [ToolCalls([PendingToolCall("push", {"v": "d"}, id="d1")]), Text("drafted")]
    )
    reviewer = ScriptedClient(
        [ToolCalls([PendingToolCall("tag", {"v": "r"}, id="r1")]), Text("reviewed")]
    )
    beam.register_agent(RigAgentRunner.new("drafter", drafter, [first], None))
    beam.register_agent(RigAgentRunner.new("reviewer", reviewer, [second], None))
    beam.register_agent(RigAgentRunner.new("merger", ScriptedClient([Text("merged")]), [], None))
    join = "merger" if kind == "parallel" else None
    beam.register_agent(
        Crew("lead", kind, beam.registry(), agents=["drafter", "reviewer"], join=join)  # type: ignore[arg-type]
    )
    return beam, first, second


async def test_a_sequential_crew_pauses_at_each_member_and_resumes_where_it_stopped() -> None:
    beam, push, tag = _crew_beam("sequential")
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    (drafting,) = first.action_required
    assert first.interrupted and drafting.tool == "push" and drafting.child is not None
    assert drafting.child["parent_tool"] == "drafter"
    assert (await beam.get_run(first.run_id or "")).status == "interrupted"
    ack = await beam.resume(_resume(first, sid, approval(drafting.action_id)))
    await beam.wait_idle()
    second = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert second.interrupted and push.calls == [{"v": "d"}] and tag.calls == []
    (reviewing,) = second.action_required
    assert reviewing.tool == "tag" and reviewing.child is not None
    # The drafter's answer is kept for the resume: it is not asked again.
    assert reviewing.child["state"]["answers"] == {"crew-1": "drafted"}
    ack = await beam.resume(_resume(first, sid, approval(reviewing.action_id)))
    await beam.wait_idle()
    done = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert done.text == "reviewed" and not done.interrupted
    assert push.calls == [{"v": "d"}] and tag.calls == [{"v": "r"}]
    assert [c.tool_name for c in done.tool_calls] == ["reviewer"]
    assert done.tool_calls[0].args == {"task": "drafted"}


async def test_a_parallel_crew_asks_every_paused_member_at_once() -> None:
    beam, push, tag = _crew_beam("parallel")
    sid = str(uuid.uuid4())
    first = await _paused(beam, sid)
    assert first.interrupted
    by_tool = {a.tool: a for a in first.action_required}
    assert set(by_tool) == {"push", "tag"}
    keys = {a.child["parent_tool_call_id"] for a in first.action_required if a.child}
    assert keys == {"crew-1", "crew-2"}
    ack = await beam.resume(
        _resume(
            first,
            sid,
            approval(by_tool["push"].action_id),
            approval(by_tool["tag"].action_id, status="cancelled"),
        )
    )
    await beam.wait_idle()
    done = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert done.text == "merged" and not done.interrupted
    assert push.calls == [{"v": "d"}] and tag.calls == []
    assert sorted(c.tool_name for c in done.tool_calls) == ["drafter", "merger", "reviewer"]
    pushed = await beam.get_action(by_tool["push"].action_id)
    assert (pushed.outcome, pushed.result) == ("approved_ran", {"tool": "push", "got": "d"})
    tagged = await beam.get_action(by_tool["tag"].action_id)
    assert (tagged.status, tagged.outcome) == ("cancelled", "declined")


async def test_a_handoff_targets_approval_in_the_handed_turn_pauses_the_interaction() -> None:
    # It used to be refused (BEM-235); test_handoff_approvals.py covers the resume.
    beam = RiverBeam()
    billing = ScriptedClient([ToolCalls([PendingToolCall("push", {"v": "x"})])])
    push = CountingTool("push", confirm=True)
    beam.register_agent(RigAgentRunner.new("billing", billing, [push], None))
    triage = ScriptedClient([ToolCalls([PendingToolCall("transfer_to_billing", {"reason": "r"})])])
    beam.register_agent(
        RigAgentRunner.new("triage", triage, [HandoffTool(beam.registry(), "billing")], None)
    )
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("triage", "x", sid))
    assert isinstance(first, AgentResult) and first.interrupted
    assert first.handoff_to == "billing" and push.calls == []
    runs = await beam.store.list_runs(interaction_id=first.interaction_id or "")
    [child] = [r for r in runs if r.parent_run_id]
    assert (child.agent_name, child.status, child.error_code) == ("billing", "interrupted", None)
    pending, _ = await beam.store.list_pending_actions(session_id=sid)
    [action] = pending
    assert (action.tool, action.args, action.child) == ("push", {"v": "x"}, None)


async def test_a_crew_called_as_a_tool_pauses_its_caller_and_resumes_through_it() -> None:
    beam, push, tag = _crew_beam("sequential")
    # The crew registered as "lead" becomes the tool of a top agent.
    top = ScriptedClient(
        [ToolCalls([PendingToolCall("ask_lead", {"task": "go"}, id="t1")]), Text("top done")]
    )
    beam.register_agent(RigAgentRunner.new("top", top, [AgentTool(beam.registry(), "lead")], None))
    sid = str(uuid.uuid4())
    first = await beam.invoke(text_request("top", "ship it", sid))
    assert isinstance(first, AgentResult) and first.interrupted
    (drafting,) = first.action_required
    assert drafting.tool == "push" and drafting.child is not None
    assert drafting.child["agent"] == "lead" and drafting.child["parent_tool_call_id"] == "t1"
    body = {"agent_name": "top", "session_id": sid, "interaction_id": first.interaction_id}
    ack = await beam.resume({**body, "actions": [approval(drafting.action_id)]})
    await beam.wait_idle()
    second = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert second.interrupted and push.calls == [{"v": "d"}] and tag.calls == []
    (reviewing,) = second.action_required
    ack = await beam.resume({**body, "actions": [approval(reviewing.action_id)]})
    await beam.wait_idle()
    done = beam.sinks.frames(ack.request_id)[-1].result  # type: ignore[attr-defined]
    assert done.text == "top done" and not done.interrupted
    assert done.tool_calls[0].result["answer"] == "reviewed"
    assert push.calls == [{"v": "d"}] and tag.calls == [{"v": "r"}]
