"""Durable runs in one process: checkpoints, and the continuation of a run whose runner died.

Runner A dies in the middle of a model call, of a rerun-safe tool and of a side-effecting
tool (recovery_kit.py); runner B's reaper takes the run over and continues it from the last
checkpoint, on the same request's stream.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import pytest

from riverbeam.agents import AgentRegistry, PendingToolCall, RigAgentRunner, Text, ToolCalls
from riverbeam.types import ActionResponseEnvelope, AgentMetadata, InvokeRequest, StreamChunk
from tests.support.recovery_kit import EffectTool, GatedClient, Replicas


def calls(*specs: tuple[str, str, str]) -> ToolCalls:
    return ToolCalls(calls=tuple(PendingToolCall(name=n, args={"v": v}, id=i) for n, v, i in specs))


def assert_one_gapless_stream(frames: list[StreamChunk]) -> None:
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert [f.type for f in frames].count("done") + [f.type for f in frames].count("error") == 1
    assert frames[-1].is_terminal


def recovered_frames(frames: list[StreamChunk]) -> list[StreamChunk]:
    return [f for f in frames if f.data is not None and f.data.phase == "recovered"]


def tool_messages(client: GatedClient, call: int) -> dict[str, Any]:
    """The tool answers the model was shown in call number `call`, by tool_call_id."""
    return {
        m["tool_call_id"]: json.loads(m["content"])
        for m in client.calls[call].messages
        if m.get("role") == "tool"
    }


async def test_a_run_checkpoints_each_step_with_what_it_needs_to_continue() -> None:
    read = EffectTool("look", read_only=True)
    client = GatedClient([calls(("look", "a", "c1")), Text("all done")])
    client.hold_at = 1  # the second model call waits: the tool round is checkpointed by then
    replicas = Replicas(client, [read])
    request_id, run_id = await replicas.start("look around")
    await client.waiting.wait()
    checkpoint = await replicas.store.get_run_checkpoint(run_id=run_id)
    assert checkpoint is not None and checkpoint.lease_epoch == 1
    # Loop start, the model turn asking for the tool, the tool's result.
    assert checkpoint.step == 3
    state = checkpoint.state
    assert state["request"]["request_id"] == request_id
    assert state["next_seq"] == len(replicas.frames(request_id)) + 1
    agent = state["agent"]
    assert agent["rounds"] == 1
    assert agent["round"]["answered"] == ["c1"] and agent["round"]["started"] is None
    assert [m["role"] for m in agent["messages"]][-3:] == ["user", "assistant", "tool"]
    assert agent["records"][0]["tool_name"] == "look"
    client.release.set()
    assert replicas.task is not None
    await replicas.task
    run = await replicas.store.get_run(run_id=run_id)
    assert (run.status, run.holders) == ("completed", [])


async def test_a_model_call_in_flight_is_made_again_by_the_replica_that_takes_over() -> None:
    read = EffectTool("look", read_only=True)
    client = GatedClient([calls(("look", "a", "c1")), Text("the answer")])
    client.hold_at = 1
    replicas = Replicas(client, [read])
    request_id, run_id = await replicas.start("look around")
    await client.waiting.wait()
    try:
        assert await replicas.kill_a(recover=replicas.b.recover) == 1
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.holders, run.lease_epoch) == (
        "completed",
        ["runner-a", "runner-b"],
        2,
    )
    assert run.result is not None and run.result.text == "the answer"
    assert len(read.calls) == 1  # answered before the checkpoint: not run again
    # B's model call saw the tool's answer from A's checkpoint.
    assert tool_messages(client, 2)["c1"] == {"tool": "look", "did": "a"}
    frames = replicas.frames(request_id)
    assert_one_gapless_stream(frames)
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "the answer"
    [recovered] = recovered_frames(frames)
    assert recovered.data is not None and "runner-b" in recovered.data.text
    # The session records the run once: the tool result and the answer.
    messages, _ = await replicas.store.list_messages(session_id=run.session_id)
    assert [(m.role, m.type) for m in messages] == [
        ("human", "message"),
        ("tool", "tool_result"),
        ("ai", "message"),
    ]


async def test_a_rerun_safe_tool_in_flight_is_run_again() -> None:
    read = EffectTool("look", idempotent=True)
    read.hold_first = True
    client = GatedClient([calls(("look", "a", "c1")), Text("seen it")])
    replicas = Replicas(client, [read])
    request_id, run_id = await replicas.start("look")
    await read.started.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(run_id)
    finally:
        read.release.set()
        await replicas.bury_a()
    assert run.status == "completed" and run.result is not None
    assert run.result.text == "seen it"
    assert len(read.calls) == 2  # A's call (lost with A) and B's
    assert [c.tool_name for c in run.result.tool_calls] == ["look"]
    assert_one_gapless_stream(replicas.frames(request_id))


async def _paused_on_unknown(
    replicas: Replicas, effect: EffectTool, request_id: str, run_id: str
) -> Any:
    await effect.started.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(run_id)
    finally:
        effect.release.set()
        await replicas.bury_a()
    return run


async def test_a_side_effecting_tool_in_flight_pauses_on_outcome_unknown() -> None:
    effect = EffectTool("commit")
    effect.hold_first = True
    client = GatedClient([calls(("commit", "x", "c1"), ("commit", "y", "c2"))])
    replicas = Replicas(client, [effect])
    request_id, run_id = await replicas.start("commit twice")
    run = await _paused_on_unknown(replicas, effect, request_id, run_id)
    assert run.status == "interrupted" and run.result is not None
    [action] = run.result.action_required
    assert (action.kind, action.tool, action.args, action.tool_call_id) == (
        "outcome_unknown",
        "commit",
        {"v": "x"},
        "c1",
    )
    assert len(effect.calls) == 1  # not run again; the call after it not run at all
    [skipped] = run.result.tool_calls
    assert skipped.tool_call_id == "c2" and skipped.result["skipped"] is True
    stored = await replicas.store.get_action(action_id=action.action_id)
    assert (stored.kind, stored.status) == ("outcome_unknown", "pending")
    frames = replicas.frames(request_id)
    assert_one_gapless_stream(frames)
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.interrupted


@pytest.mark.parametrize(
    ("decision", "runs", "told"),
    [("retry", 2, {"tool": "commit", "did": "x"}), ("skip", 1, "skip"), ("done", 1, "done")],
)
async def test_a_person_answers_outcome_unknown(decision: str, runs: int, told: Any) -> None:
    effect = EffectTool("commit")
    effect.hold_first = True
    client = GatedClient([calls(("commit", "x", "c1"))])
    replicas = Replicas(client, [effect])
    request_id, run_id = await replicas.start("commit")
    run = await _paused_on_unknown(replicas, effect, request_id, run_id)
    [action] = run.result.action_required
    client.push(Text("finished"))
    payload: dict[str, Any] = {"decision": decision}
    if decision == "done":
        payload["result"] = "commit abc123"
    resume = InvokeRequest(
        agent_name="worker",
        session_id=run.session_id,
        interaction_id=run.interaction_id,
        content=[],
        actions=[
            ActionResponseEnvelope(
                action_id=action.action_id,
                kind="outcome_unknown",
                request_id=str(uuid.uuid4()),
                payload=payload,
            )
        ],
    )
    prepared = await replicas.b.prepare(resume)
    result = await replicas.b.execute(prepared)
    assert result.text == "finished"
    assert len(effect.calls) == runs
    answer = tool_messages(client, len(client.calls) - 1)["c1"]
    if decision == "retry":
        assert answer == told
    else:
        assert answer["decision"] == told and answer["outcome_unknown"] is True
        if decision == "done":
            assert answer["result"] == "commit abc123"


async def test_a_run_taken_over_too_often_is_failed_with_its_own_code() -> None:
    read = EffectTool("look", read_only=True)
    client = GatedClient([calls(("look", "a", "c1")), Text("never")])
    client.hold_at = 1
    replicas = Replicas(client, [read])
    request_id, run_id = await replicas.start("look")
    await client.waiting.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover, max_takeovers=0)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.error_code) == ("failed", "BEM-267")
    frames = replicas.frames(request_id)
    assert_one_gapless_stream(frames)
    assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-267")


async def test_policy_fail_fails_the_run_as_before() -> None:
    read = EffectTool("look", read_only=True)
    client = GatedClient([calls(("look", "a", "c1")), Text("never")])
    client.hold_at = 1
    replicas = Replicas(client, [read])
    request_id, run_id = await replicas.start("look")
    await client.waiting.wait()
    try:
        assert await replicas.store.get_run_checkpoint(run_id=run_id) is not None
        await replicas.kill_a()  # no recover hook: RIVERBEAM_RECOVERY_POLICY=fail
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.error_code) == ("failed", "BEM-034")
    assert run.holders == ["runner-a", "runner-b"]
    frames = replicas.frames(request_id)
    assert_one_gapless_stream(frames)
    assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-034")
    assert recovered_frames(frames) == []


class _OtherVersion(RigAgentRunner):
    def metadata(self) -> AgentMetadata:
        return super().metadata().model_copy(update={"version": "99.0.0"})


async def _lost_in_a_model_call(replicas: Replicas, client: GatedClient) -> tuple[str, str]:
    request_id, run_id = await replicas.start("think")
    await client.waiting.wait()
    return request_id, run_id


async def test_a_replica_that_does_not_serve_the_agent_fails_the_run_with_bem_268() -> None:
    client = GatedClient([Text("never")])
    client.hold_at = 0
    replicas = Replicas(client, [])
    replicas.b.registry = AgentRegistry()  # B has no `worker`
    request_id, run_id = await _lost_in_a_model_call(replicas, client)
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.error_code) == ("failed", "BEM-268")
    frames = replicas.frames(request_id)
    assert_one_gapless_stream(frames)
    assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-268")
    assert run_id not in replicas.b.held_run_ids


async def test_recovery_by_another_agent_version_follows_the_version_policy() -> None:
    client = GatedClient([Text("never")])
    client.hold_at = 0
    replicas = Replicas(client, [])
    other = AgentRegistry()
    other.register(_OtherVersion("worker", client, []))
    replicas.b.registry = other
    request_id, run_id = await _lost_in_a_model_call(replicas, client)
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    # The default policy (`refuse`): the pinned version and this runner's differ.
    assert (run.status, run.error_code) == ("failed", "BEM-260")
    assert run.error_message is not None and "99.0.0" in run.error_message
    assert replicas.frames(request_id)[-1].error_code == "BEM-260"


async def test_a_run_without_a_checkpoint_is_failed_as_lost() -> None:
    client = GatedClient([Text("never")])
    client.hold_at = 0
    replicas = Replicas(client, [])
    replicas.a.options = replace(replicas.a.options, checkpoints=False)
    request_id, run_id = await _lost_in_a_model_call(replicas, client)
    try:
        assert await replicas.store.get_run_checkpoint(run_id=run_id) is None
        await replicas.kill_a(recover=replicas.b.recover)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.error_code) == ("failed", "BEM-034")
    assert replicas.frames(request_id)[-1].error_code == "BEM-034"
