"""One run at a time per session (through the runner service), and frames published live."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import (
    DEFAULT_MODEL,
    Grant,
    JetStreamSinks,
    PipelineOptions,
    RiverBeam,
    RunnerClient,
)
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import AgentResult, InvokeRequest, StreamAck
from tests.integration.runtime.rt_kit import (
    GUARD_S,
    SLOW_GUARD_S,
    HoldAgent,
    assert_gap_free,
    collect,
    first_frames,
    runner_service,
    runner_settings,
    store_service,
    text_request,
    uid,
)

pytestmark = pytest.mark.nats


def request(agent: str, text: str, session_id: str, **extra: object) -> InvokeRequest:
    return InvokeRequest.parse(text_request(agent, text, session_id, **extra))


async def test_busy_session_is_rejected_or_queued_by_the_runner_service(
    store: BeamStore, nats: NatsConnection, nats_url: str
) -> None:
    session_id = uid()
    async with (
        store_service(store) as store_url,
        runner_service(runner_settings(nats_url, store_url)) as rejecting,
        runner_service(
            runner_settings(
                nats_url, store_url, busy_session_policy="queue", queue_timeout_s=SLOW_GUARD_S
            )
        ) as queueing,
    ):
        reject_client, queue_client = RunnerClient(rejecting), RunnerClient(queueing)
        try:
            hold = await reject_client.run_invoke(
                request("hold", "take your time", session_id, stream=True),
                model=DEFAULT_MODEL,
                grant=Grant(),
                timeout_s=GUARD_S,
            )
            assert isinstance(hold, StreamAck)
            await first_frames(nats.js, hold.request_id, 1)

            # reject: BEM-030 at once, and nothing of the refused request is written.
            refused_id = uid()
            with pytest.raises(RiverbeamError) as info:
                await reject_client.run_invoke(
                    request("assistant", "me too", session_id, request_id=refused_id),
                    model=DEFAULT_MODEL,
                    grant=Grant(),
                    timeout_s=GUARD_S,
                )
            assert info.value.code is ErrorCode.SESSION_BUSY
            assert await store.get_run_by_request(request_id=refused_id) is None

            # queue: waits for the session, then runs.
            queued_id = uid()
            queued = asyncio.create_task(
                queue_client.run_invoke(
                    request("assistant", "after you", session_id, request_id=queued_id),
                    model=DEFAULT_MODEL,
                    grant=Grant(),
                    timeout_s=SLOW_GUARD_S,
                )
            )
            await asyncio.sleep(0.3)
            assert not queued.done()
            assert await store.get_run_by_request(request_id=queued_id) is None

            assert await reject_client.cancel_run(hold.request_id, reason="make room")
            async with asyncio.timeout(SLOW_GUARD_S):
                result = await queued
        finally:
            await reject_client.aclose()
            await queue_client.aclose()

    assert isinstance(result, AgentResult) and result.text == "Echo: after you"
    held = await store.get_run(run_id=hold.run_id or "")
    after = await store.get_run(run_id=result.run_id or "")
    assert held.status == "cancelled" and after.status == "completed"
    assert held.finished_at is not None and after.started_at >= held.finished_at
    messages, _ = await store.list_messages(session_id=session_id)
    assert [(m.seq, m.role, m.run_id) for m in messages] == [
        (1, "human", held.run_id),
        (2, "ai", held.run_id),
        (3, "human", after.run_id),
        (4, "ai", after.run_id),
    ]


async def test_frames_are_published_as_the_agent_produces_them(
    store: BeamStore, nats: NatsConnection
) -> None:
    release = asyncio.Event()
    beam = RiverBeam(
        store=store,
        sinks=JetStreamSinks(nats.js, StreamConfig()),
        options=PipelineOptions(lease_ttl_s=30),
    )
    beam.register_agent(HoldAgent("slow", release=release))
    counted_before = {kind: _frames_counted(kind) for kind in ("chunk", "done")}
    try:
        ack = await beam.invoke(text_request("slow", "go", stream=True))
        assert isinstance(ack, StreamAck)
        (first,) = await first_frames(nats.js, ack.request_id, 1)
        # The agent is still waiting: the frame did not wait for the run to end.
        assert not release.is_set()
        assert (first.seq, first.type) == (1, "chunk")
        run = await store.get_run(run_id=ack.run_id or "")
        assert run.status == "running"
        release.set()
        frames = await collect(nats.js, ack.request_id, guard_s=GUARD_S)
        await beam.wait_idle()
    finally:
        await beam.aclose(grace_s=1)
    assert_gap_free(frames)
    assert frames[0].to_json() == first.to_json()
    assert [f.type for f in frames] == ["chunk", "chunk", "done"]
    assert frames[-1].result is not None and frames[-1].result.text == "working on it, done"
    # Each frame stored is counted once, by its type (riverbeam_frames_published_total).
    assert {kind: _frames_counted(kind) - n for kind, n in counted_before.items()} == {
        "chunk": 2,
        "done": 1,
    }


def _frames_counted(frame_type: str) -> float:
    value = REGISTRY.get_sample_value("riverbeam_frames_published_total", {"type": frame_type})
    return value or 0.0
