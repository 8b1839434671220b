"""Durable runs on real NATS JetStream, on the InMemoryStore and on Postgres.

Runner A dies (tests/support/recovery_kit.py: from then on it reaches neither the store nor
NATS) in the middle of a model call, of a rerun-safe tool and of a side-effecting tool;
its 1 s lease runs out and runner B's reaper takes the run over and continues it from its
last checkpoint. A follower of the request's subject sees one gapless stream that ends once.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from riverbeam.agents import PendingToolCall, Text, ToolCalls
from riverbeam.runtime import JetStreamSinks
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import ActionResponseEnvelope, InvokeRequest, StreamChunk
from tests.integration.runtime.rt_kit import assert_gap_free, collect
from tests.support.recovery_kit import EffectTool, GatedClient, Replicas

pytestmark = [pytest.mark.nats]


def calls(*specs: tuple[str, str, str]) -> ToolCalls:
    return ToolCalls(calls=tuple(PendingToolCall(name=n, args={"v": v}, id=i) for n, v, i in specs))


def replicas_on(
    store: BeamStore, nats: NatsConnection, client: GatedClient, tools: list[Any]
) -> Replicas:
    return Replicas(client, tools, store=store, sinks=JetStreamSinks(nats.js, StreamConfig()))


def phases(frames: list[StreamChunk]) -> list[str | None]:
    return [f.data.phase if f.data is not None else None for f in frames]


async def test_a_model_call_in_flight_is_made_again(store: BeamStore, nats: NatsConnection) -> None:
    read = EffectTool("look", read_only=True)
    client = GatedClient([calls(("look", "a", "c1")), Text("the answer")])
    client.hold_at = 1
    replicas = replicas_on(store, nats, client, [read])
    request_id, run_id = await replicas.start("look around")
    await client.waiting.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        frames = await collect(nats.js, request_id)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.holders, run.lease_epoch) == (
        "completed",
        ["runner-a", "runner-b"],
        2,
    )
    assert run.request_id == request_id
    assert run.result is not None and run.result.text == "the answer"
    assert len(read.calls) == 1
    assert_gap_free(frames)
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.text == "the answer"
    assert phases(frames).count("recovered") == 1
    # Everything A published stays, in order, before B's frames.
    recovered_at = phases(frames).index("recovered")
    assert [f.type for f in frames[:recovered_at]][:2] == ["placeholder", "thinking"]
    assert any(f.type == "tool" for f in frames[:recovered_at])
    messages, _ = await store.list_messages(session_id=run.session_id)
    assert [(m.role, m.type) for m in messages] == [
        ("human", "message"),
        ("tool", "tool_result"),
        ("ai", "message"),
    ]


async def test_a_rerun_safe_tool_in_flight_is_run_again(
    store: BeamStore, nats: NatsConnection
) -> None:
    read = EffectTool("look", idempotent=True)
    read.hold_first = True
    client = GatedClient([calls(("look", "a", "c1")), Text("seen it")])
    replicas = replicas_on(store, nats, client, [read])
    request_id, run_id = await replicas.start("look")
    await read.started.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        frames = await collect(nats.js, request_id)
        run = await replicas.settled(run_id)
    finally:
        read.release.set()
        await replicas.bury_a()
    assert run.status == "completed" and run.result is not None
    assert run.result.text == "seen it"
    assert len(read.calls) == 2
    assert_gap_free(frames)
    assert frames[-1].type == "done"
    # A's rerun-safe start was never written; B's call is on the ledger, at B's epoch.
    ledger, _ = await store.list_tool_executions(run_id=run_id)
    assert [(e.tool, e.status, e.runner_id, e.lease_epoch) for e in ledger] == [
        ("look", "succeeded", "runner-b", 2)
    ]


@pytest.mark.parametrize("decision", ["retry", "skip", "done"])
async def test_a_side_effecting_tool_in_flight_waits_for_a_person(
    store: BeamStore, nats: NatsConnection, decision: str
) -> None:
    effect = EffectTool("commit")
    effect.hold_first = True
    client = GatedClient([calls(("commit", "x", "c1"))])
    replicas = replicas_on(store, nats, client, [effect])
    request_id, run_id = await replicas.start("commit")
    await effect.started.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover)
        frames = await collect(nats.js, request_id)
        run = await replicas.settled(run_id)
    finally:
        effect.release.set()
        await replicas.bury_a()
    assert_gap_free(frames)
    assert frames[-1].type == "done" and frames[-1].result is not None
    assert frames[-1].result.interrupted
    assert run.status == "interrupted" and run.result is not None
    [action] = run.result.action_required
    assert (action.kind, action.tool, action.tool_call_id) == ("outcome_unknown", "commit", "c1")
    assert len(effect.calls) == 1  # nothing with a side effect ran twice
    # A put the call on record as started before it ran; the takeover settled it unknown.
    ledger, _ = await store.list_tool_executions(run_id=run_id)
    assert [(e.seq, e.tool, e.status, e.runner_id) for e in ledger][:1] == [
        (1, "commit", "unknown", "runner-a")
    ]
    assert all(e.seq > 1 and e.runner_id == "runner-b" for e in ledger[1:])

    client.push(Text("finished"))
    payload: dict[str, Any] = {"decision": decision}
    if decision == "done":
        payload["result"] = "abc123"
    prepared = await replicas.b.prepare(
        InvokeRequest(
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
    )
    result = await replicas.b.execute(prepared)
    assert result.text == "finished"
    assert len(effect.calls) == (2 if decision == "retry" else 1)
    shown = {
        m["tool_call_id"]: m["content"]
        for m in client.calls[-1].messages
        if m.get("role") == "tool"
    }
    told = json.loads(shown["c1"])
    if decision == "retry":
        assert told == {"tool": "commit", "did": "x"}
    else:
        assert told["decision"] == decision
    stored = await store.get_action(action_id=action.action_id)
    assert stored.status == "resolved"


async def test_a_run_taken_over_too_often_fails_with_bem_267(
    store: BeamStore, nats: NatsConnection
) -> None:
    client = GatedClient([Text("never")])
    client.hold_at = 0
    replicas = replicas_on(store, nats, client, [])
    request_id, run_id = await replicas.start("think")
    await client.waiting.wait()
    try:
        await replicas.kill_a(recover=replicas.b.recover, max_takeovers=0)
        frames = await collect(nats.js, request_id)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.error_code) == ("failed", "BEM-267")
    assert_gap_free(frames)
    assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-267")


async def test_policy_fail_keeps_failing_a_lost_run(store: BeamStore, nats: NatsConnection) -> None:
    client = GatedClient([Text("never")])
    client.hold_at = 0
    replicas = replicas_on(store, nats, client, [])
    request_id, run_id = await replicas.start("think")
    await client.waiting.wait()
    try:
        assert await store.get_run_checkpoint(run_id=run_id) is not None
        await replicas.kill_a()  # RIVERBEAM_RECOVERY_POLICY=fail: no recover hook
        frames = await collect(nats.js, request_id)
        run = await replicas.settled(run_id)
    finally:
        await replicas.bury_a()
    assert (run.status, run.error_code) == ("failed", "BEM-034")
    assert_gap_free(frames)
    assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-034")
    assert "recovered" not in phases(frames)
