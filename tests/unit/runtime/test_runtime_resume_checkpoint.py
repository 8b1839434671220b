"""A runner that dies while a resume runs its approved calls (before the run's first ordinary
checkpoint): the resume's calls are checkpointed as a round of their own, so the replica that
takes the run over continues it (docs/durability.md, "Recovery").

Runner A holds a confirm_required tool call for approval; the approval's resume runs the call
on A, which dies in the middle of it (recovery_kit.py); runner B's reaper takes over.
"""

from __future__ import annotations

import uuid
from typing import Any

from riverbeam.agents import Text
from riverbeam.types import ActionResponseEnvelope, InvokeRequest
from tests.support.recovery_kit import GatedClient, Replicas
from tests.support.resume_recovery_kit import ApprovedTool, calls, held_then_resumed


async def test_a_side_effecting_approved_call_in_flight_pauses_on_outcome_unknown() -> None:
    effect = ApprovedTool("commit")
    client = GatedClient([calls(("x", "c1"), ("y", "c2"))])
    replicas = Replicas(client, [effect])
    held, run = await held_then_resumed(replicas, effect, "commit twice")
    first, second = held.result.action_required if held.result else []

    assert run.holders == ["runner-a", "runner-b"]
    assert run.status == "interrupted" and run.result is not None
    [action] = run.result.action_required
    assert (action.kind, action.tool, action.args, action.tool_call_id) == (
        "outcome_unknown",
        "commit",
        {"v": "x"},
        "c1",
    )
    assert effect.calls == [{"v": "x"}]  # never run twice; the call after it not run at all
    [not_run] = run.result.tool_calls
    assert not_run.tool_call_id == "c2" and not_run.result["error"]["code"] == "BEM-271"
    # The first approval's call has an unknown outcome; the second is known not to have run.
    stored_first = await replicas.store.get_action(action_id=first.action_id)
    stored_second = await replicas.store.get_action(action_id=second.action_id)
    assert stored_first.outcome == "approved_unknown"
    assert stored_second.outcome == "approved_failed"
    assert "BEM-271" in (stored_second.error or "")
    pending = await replicas.store.get_action(action_id=action.action_id)
    assert (pending.kind, pending.status) == ("outcome_unknown", "pending")
    # A put the approved call on record as started before it ran; the takeover settled it.
    ledger, _ = await replicas.store.list_tool_executions(run_id=run.run_id)
    assert [(e.tool_call_id, e.status, e.runner_id) for e in ledger] == [
        ("c1", "unknown", "runner-a"),
        ("c2", "cancelled", "runner-b"),
    ]

    # A person says it did run: it is not run again, and the run ends.
    client.push(Text("committed once"))
    answer = InvokeRequest(
        agent_name="worker",
        session_id=run.session_id,
        interaction_id=run.interaction_id,
        content=[],
        actions=[
            ActionResponseEnvelope(
                action_id=action.action_id,
                kind="outcome_unknown",
                request_id=str(uuid.uuid4()),
                payload={"decision": "done", "result": "abc"},
            )
        ],
    )
    result = await replicas.b.execute(await replicas.b.prepare(answer))
    assert result.text == "committed once"
    assert effect.calls == [{"v": "x"}]


async def test_a_rerun_safe_approved_call_in_flight_is_run_again() -> None:
    effect = ApprovedTool("commit", idempotent=True)
    client = GatedClient([calls(("x", "c1")), Text("pushed")])
    replicas = Replicas(client, [effect])
    _, run = await held_then_resumed(replicas, effect, "push it")

    assert run.holders == ["runner-a", "runner-b"]
    assert run.status == "completed" and run.result is not None
    assert run.result.text == "pushed"
    assert effect.calls == [{"v": "x"}, {"v": "x"}]
    # The model saw the approved call's answer (made by B).
    shown = [m for m in client.calls[-1].messages if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in shown] == ["c1"]
    frames = replicas.frames(run.request_id or "")
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert frames[-1].type == "done"


async def test_answered_approved_calls_are_not_run_again() -> None:
    """A dies in the second approved call: the first one's answer is in the checkpoint."""
    effect = ApprovedTool("commit")
    second: dict[str, Any] = {}

    async def hold_second(args: dict[str, Any], input: Any) -> Any:
        effect.calls.append(dict(args))
        if len(effect.calls) == 2:
            effect.started.set()
            await effect.release.wait()
        second["seen"] = True
        return {"tool": "commit", "did": args["v"]}

    effect.invoke = hold_second  # type: ignore[method-assign]
    client = GatedClient([calls(("x", "c1"), ("y", "c2"))])
    replicas = Replicas(client, [effect])
    held, run = await held_then_resumed(replicas, effect, "commit twice")
    assert effect.calls == [{"v": "x"}, {"v": "y"}]
    assert run.status == "interrupted" and run.result is not None
    [action] = run.result.action_required
    assert (action.kind, action.tool_call_id) == ("outcome_unknown", "c2")
    first = held.result.action_required[0] if held.result else None
    assert first is not None
    stored = await replicas.store.get_action(action_id=first.action_id)
    assert stored.outcome == "approved_ran"
