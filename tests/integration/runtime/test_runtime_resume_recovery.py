"""A runner that dies while a resume runs its approved calls, on real NATS JetStream with the
InMemoryStore and Postgres: the replica that takes the run over continues it from the resume's
checkpoint (tests/support/resume_recovery_kit.py), on one gapless stream."""

from __future__ import annotations

import pytest

from riverbeam.agents import Text
from riverbeam.runtime import JetStreamSinks
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from tests.integration.runtime.rt_kit import assert_gap_free, collect
from tests.support.recovery_kit import GatedClient, Replicas
from tests.support.resume_recovery_kit import ApprovedTool, calls, held_then_resumed

pytestmark = [pytest.mark.nats]


@pytest.mark.parametrize("idempotent", [False, True], ids=["side-effecting", "rerun-safe"])
async def test_an_approved_call_in_flight_is_continued(
    store: BeamStore, nats: NatsConnection, idempotent: bool
) -> None:
    effect = ApprovedTool("commit", idempotent=idempotent)
    client = GatedClient([calls(("x", "c1"), ("y", "c2")), Text("both done")])
    replicas = Replicas(
        client, [effect], store=store, sinks=JetStreamSinks(nats.js, StreamConfig())
    )
    _, run = await held_then_resumed(replicas, effect, "commit twice")
    frames = await collect(nats.js, run.request_id or "")

    assert run.holders == ["runner-a", "runner-b"]
    assert_gap_free(frames)
    assert frames[-1].type == "done" and frames[-1].result is not None
    phases = [f.data.phase if f.data is not None else None for f in frames]
    assert phases.count("recovered") == 1
    assert run.result is not None
    if idempotent:
        # Made again by B, then the second approved call, then the model's answer.
        assert (run.status, run.result.text) == ("completed", "both done")
        assert effect.calls == [{"v": "x"}, {"v": "x"}, {"v": "y"}]
    else:
        assert run.status == "interrupted"
        [action] = run.result.action_required
        assert (action.kind, action.tool_call_id) == ("outcome_unknown", "c1")
        assert effect.calls == [{"v": "x"}]  # nothing with a side effect ran twice
        ledger, _ = await store.list_tool_executions(run_id=run.run_id)
        assert [(e.tool_call_id, e.status) for e in ledger] == [
            ("c1", "unknown"),
            ("c2", "cancelled"),
        ]
