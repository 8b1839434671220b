"""Cancelling a run part way: RiverBeam.cancel, and the NATS control subject reaching a runner.

Only the order of events is asserted (the error frame comes after the records are written);
waits are bounded by a guard so a broken cancel fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from riverbeam.agents import OpenAiCompatible, RigAgentRunner, ToolSpec, json_params
from riverbeam.agents._io import AgentInput
from riverbeam.runtime import (
    DEFAULT_MODEL,
    Grant,
    JetStreamSinks,
    PipelineOptions,
    RiverBeam,
    RunnerClient,
)
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig, publish_cancel
from riverbeam.types import InvokeRequest, StreamAck, StreamChunk, TokenUsage
from tests.integration.runtime.rt_hooks import WORKER_USAGE
from tests.integration.runtime.rt_kit import (
    GUARD_S,
    BlockingTool,
    HoldAgent,
    assert_gap_free,
    collect,
    frame_where,
    runner_service,
    runner_settings,
    store_service,
    text_request,
    uid,
)
from tests.support.chat_server import ChatServer, call, stall, tool_calls

pytestmark = pytest.mark.nats

ROUND_ONE_USAGE = {"prompt_tokens": 21, "completion_tokens": 5, "total_tokens": 26}


@pytest.fixture(params=["tool", "model"])
def block_in(request: pytest.FixtureRequest) -> str:
    """Where the run is blocked when it is cancelled: in a tool, or waiting for the model."""
    kind: str = request.param
    return kind


@pytest.fixture(params=["control_subject", "other_replica"])
def cancel_via(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


class NoteTool:
    """Answers at once."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="note",
            description="takes a note",
            parameters=json_params({"v": {"type": "string"}}, ["v"]),
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        return {"noted": args["v"]}


def is_call_of(name: str) -> Any:
    def want(frame: StreamChunk) -> bool:
        data = frame.data
        return (
            frame.type == "tool"
            and data is not None
            and data.type == "action"
            and data.tool_name == name
        )

    return want


async def cancelled_records(
    store: BeamStore, ack: StreamAck, frames: list[StreamChunk], usage: TokenUsage
) -> None:
    """What every cancelled run leaves: the error frame last, the run and interaction cancelled,
    the partial text and the usage so far."""
    assert_gap_free(frames)
    last = frames[-1]
    assert (last.type, last.error_code) == ("error", "BEM-033")
    assert last.run_id == ack.run_id
    # The terminal frame is published after the finish-run step: read right after it.
    run = await store.get_run(run_id=ack.run_id or "")
    assert (run.status, run.error_code) == ("cancelled", "BEM-033")
    assert run.token_usage == usage
    assert run.result is not None
    assert run.result.text == "Let me look."
    assert run.result.metadata and run.result.metadata.get("cancelled") is True
    interaction = await store.get_interaction(interaction_id=ack.interaction_id)
    assert interaction.status == "cancelled"


async def test_cancel_stops_a_blocked_tool_or_model_call(
    store: BeamStore, nats: NatsConnection, block_in: str
) -> None:
    usage = TokenUsage(**ROUND_ONE_USAGE)
    script: list[dict[str, Any]]
    if block_in == "tool":
        script = [
            tool_calls(
                [call("block", {"v": "x"})], text="Let me look.", usage=dict(ROUND_ONE_USAGE)
            )
        ]
    else:
        script = [
            tool_calls(
                [call("note", {"v": "x"})], text="Let me look.", usage=dict(ROUND_ONE_USAGE)
            ),
            stall(),
        ]
    blocking = BlockingTool()
    async with ChatServer(script) as server:
        client = OpenAiCompatible(server.url, "test-key", "m", max_retries=0)
        beam = RiverBeam(
            store=store,
            sinks=JetStreamSinks(nats.js, StreamConfig()),
            options=PipelineOptions(lease_ttl_s=30),
        )
        beam.register_agent(RigAgentRunner.new("worker", client, [blocking, NoteTool()], None))
        try:
            request_id = uid()
            follower = asyncio.create_task(collect(nats.js, request_id))
            ack = await beam.invoke(
                text_request("worker", "look", stream=True, request_id=request_id)
            )
            assert isinstance(ack, StreamAck)
            async with asyncio.timeout(GUARD_S):
                if block_in == "tool":
                    await frame_where(nats.js, request_id, is_call_of("block"))
                    await blocking.started.wait()
                else:
                    await server.wait_for_completions(2)
            assert await beam.cancel(request_id, "user pressed stop")
            async with asyncio.timeout(GUARD_S):
                frames = await follower
                await beam.wait_idle()
        finally:
            await beam.aclose(grace_s=1)
            await client.aclose()

    await cancelled_records(store, ack, frames, usage)
    assert "user pressed stop" in (frames[-1].error or "")
    messages, _ = await store.list_messages(session_id=ack.session_id)
    tool_messages = [(m.tool_name, m.tool_result) for m in messages if m.role == "tool"]
    if block_in == "tool":
        # The call that never got its answer is closed with a cancelled result.
        assert blocking.cancelled
        assert tool_messages == [("block", {"cancelled": True})]
    else:
        assert tool_messages == [("note", {"noted": "x"})]
    # The calls answered before the cancel are part of the partial result.
    run = await store.get_run(run_id=ack.run_id or "")
    assert run.result is not None
    expected = [] if block_in == "tool" else [("note", {"noted": "x"})]
    assert [(c.tool_name, c.result) for c in run.result.tool_calls] == expected
    assert not await beam.cancel(request_id)


async def test_cancel_over_nats_reaches_the_runner_holding_the_run(
    store: BeamStore, nats: NatsConnection, nats_url: str, cancel_via: str
) -> None:
    """Two runner services; the run is on A. The cancel comes from the control subject
    directly, or through B's CancelRun (B does not hold it, so it asks over NATS)."""
    async with (
        store_service(store) as store_url,
        runner_service(runner_settings(nats_url, store_url)) as runner_a,
        runner_service(runner_settings(nats_url, store_url)) as runner_b,
    ):
        client_a, client_b = RunnerClient(runner_a), RunnerClient(runner_b)
        try:
            request_id = uid()
            follower = asyncio.create_task(collect(nats.js, request_id))
            ack = await client_a.run_invoke(
                InvokeRequest.parse(
                    text_request("worker", "look", stream=True, request_id=request_id)
                ),
                model=DEFAULT_MODEL,
                grant=Grant(),
                timeout_s=GUARD_S,
            )
            assert isinstance(ack, StreamAck)
            await frame_where(nats.js, request_id, is_call_of("block"))
            if cancel_via == "control_subject":
                await publish_cancel(nats.nc, request_id, "user pressed stop")
            else:
                assert await client_b.cancel_run(request_id, reason="user pressed stop")
            async with asyncio.timeout(GUARD_S):
                frames = await follower
        finally:
            await client_a.aclose()
            await client_b.aclose()

    await cancelled_records(store, ack, frames, WORKER_USAGE)
    messages, _ = await store.list_messages(session_id=ack.session_id)
    assert [(m.role, m.tool_name, m.tool_result) for m in messages if m.role == "tool"] == [
        ("tool", "block", {"cancelled": True})
    ]


async def test_cancel_right_after_the_ack_is_not_lost(
    store: BeamStore, nats: NatsConnection
) -> None:
    """The ack comes back before the agent starts; a cancel in that window (or while the
    first frame is being published) still stops the run. Repeated, with small delays, to
    land in the different windows."""
    beam = RiverBeam(
        store=store,
        sinks=JetStreamSinks(nats.js, StreamConfig()),
        options=PipelineOptions(lease_ttl_s=30),
    )
    beam.register_agent(HoldAgent("hold"))
    try:
        for attempt in range(20):
            ack = await beam.invoke(text_request("hold", "never mind", stream=True))
            assert isinstance(ack, StreamAck)
            if attempt:
                await asyncio.sleep(attempt * 0.0005)
            assert await beam.cancel(ack.request_id, "changed my mind")
            frames = await collect(nats.js, ack.request_id, guard_s=GUARD_S)
            assert_gap_free(frames)
            assert frames[-1].error_code == "BEM-033"
            if not attempt:
                # Cancelled before it started: the error frame is the only one.
                assert [f.type for f in frames] == ["error"]
            run = await store.get_run(run_id=ack.run_id or "")
            assert (run.status, run.error_code) == ("cancelled", "BEM-033")
        await beam.wait_idle()
    finally:
        await beam.aclose(grace_s=1)


class SwallowingSinks(JetStreamSinks):
    """JetStream sinks whose first publish swallows a cancellation, as asyncio.wait_for does on
    Python 3.11 when the publish acknowledgement arrives together with the cancel."""

    def __init__(self, nats: NatsConnection) -> None:
        super().__init__(nats.js, StreamConfig())
        self.publishing = asyncio.Event()

    async def open(self, request_id: str, *, stream: bool) -> Any:
        inner = await super().open(request_id, stream=stream)
        sinks = self

        class Sink:
            async def publish(self, chunk: StreamChunk) -> None:
                if not sinks.publishing.is_set():
                    sinks.publishing.set()
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.Event().wait()
                await inner.publish(chunk)

        return Sink()


async def test_cancel_swallowed_while_publishing_still_stops_the_run(
    store: BeamStore, nats: NatsConnection
) -> None:
    sinks = SwallowingSinks(nats)
    beam = RiverBeam(store=store, sinks=sinks, options=PipelineOptions(lease_ttl_s=30))
    beam.register_agent(HoldAgent("hold"))
    try:
        ack = await beam.invoke(text_request("hold", "stop", stream=True))
        assert isinstance(ack, StreamAck)
        async with asyncio.timeout(GUARD_S):
            await sinks.publishing.wait()
        assert await beam.cancel(ack.request_id)
        frames = await collect(nats.js, ack.request_id, guard_s=GUARD_S)
        await beam.wait_idle()
    finally:
        await beam.aclose(grace_s=1)
    assert_gap_free(frames)
    assert [(f.type, f.error_code) for f in frames] == [("chunk", None), ("error", "BEM-033")]
    run = await store.get_run(run_id=ack.run_id or "")
    assert run.status == "cancelled"


async def test_cancel_right_after_the_ack_through_the_runner_service(
    store: BeamStore, nats: NatsConnection, nats_url: str
) -> None:
    async with (
        store_service(store) as store_url,
        runner_service(runner_settings(nats_url, store_url)) as runner,
    ):
        client = RunnerClient(runner)
        try:
            ack = await client.run_invoke(
                InvokeRequest.parse(text_request("hold", "never mind", stream=True)),
                model=DEFAULT_MODEL,
                grant=Grant(),
                timeout_s=GUARD_S,
            )
            assert isinstance(ack, StreamAck)
            assert await client.cancel_run(ack.request_id, reason="changed my mind")
            frames = await collect(nats.js, ack.request_id, guard_s=GUARD_S)
        finally:
            await client.aclose()
    assert_gap_free(frames)
    assert frames[-1].error_code == "BEM-033"
    run = await store.get_run(run_id=ack.run_id or "")
    assert run.status == "cancelled"
