"""InvokeStream: the StreamAck, then exactly the frames JetStream holds, in one call."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.types import StreamAck, StreamChunk
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import types_pb2
from tests.integration.router.router_kit import GUARD_S, Stack, auth, eventually, refused_stream
from tests.integration.router.test_router_follow import consumers, direct

pytestmark = pytest.mark.nats


async def events_of(stream: AsyncIterator[StreamAck | StreamChunk]) -> list[Any]:
    out: list[Any] = []
    async with asyncio.timeout(GUARD_S):
        async for event in stream:
            out.append(event)
    return out


async def test_the_ack_comes_first_then_every_frame_jetstream_holds(stack: Stack) -> None:
    alice = stack.client("alice")
    ack, *frames = await events_of(alice.invoke_stream("gated", "go"))

    assert isinstance(ack, StreamAck) and ack.run_id
    uuid.UUID(ack.request_id)  # the router chose one
    assert all(isinstance(f, StreamChunk) for f in frames)
    assert [f.type for f in frames] == ["chunk", "chunk", "chunk", "done"]
    assert [f.seq for f in frames] == [1, 2, 3, 4]
    async with asyncio.timeout(GUARD_S):
        straight = [f async for f in direct(stack, ack.request_id)]
    assert frames == straight
    run = await stack.wait_run(ack.request_id, status="completed")
    assert run.run_id == ack.run_id and run.session_id == ack.session_id


async def test_the_consumer_exists_when_the_ack_arrives_and_is_removed_after(
    stack: Stack,
) -> None:
    """Made while the invoke went to the runner: the first frame, held back here, finds it."""
    alice = stack.client("alice")
    release = stack.gate.gate(0)
    baseline = await consumers(stack)
    events = alice.invoke_stream("gated", "go")
    async with contextlib.aclosing(events):
        async with asyncio.timeout(GUARD_S):
            ack = await anext(events)
        assert isinstance(ack, StreamAck)
        assert await consumers(stack) == baseline + 1
        release.set()
        rest = await events_of(events)
    assert [f.seq for f in rest] == [1, 2, 3, 4] and rest[-1].type == "done"

    async def removed() -> bool:
        return await consumers(stack) == baseline

    await eventually(removed)


async def test_a_caller_chosen_request_id_names_the_stream(stack: Stack) -> None:
    alice = stack.client("alice")
    request_id = new_id()
    ack, *frames = await events_of(alice.invoke_stream("gated", "go", request_id=request_id))
    assert ack.request_id == request_id
    assert {f.request_id for f in frames} == {request_id}


async def test_a_refused_invoke_runs_nothing_and_leaves_no_consumer(stack: Stack) -> None:
    bob = stack.client("bob")
    bobs = await bob.invoke("gated", "go")
    baseline = await consumers(stack)
    runs_before = len(stack.records()["runs"])
    alice = stack.client("alice")

    with pytest.raises(RiverbeamError) as session:
        await events_of(alice.invoke_stream("gated", "go", session_id=bobs.session_id))
    with pytest.raises(RiverbeamError) as agent:
        await events_of(alice.invoke_stream("no-such-agent", "go"))

    assert session.value.bem == "BEM-025"
    assert agent.value.bem == "BEM-020"
    assert await consumers(stack) == baseline
    assert len(stack.records()["runs"]) == runs_before


async def test_stopping_early_stops_the_reading_not_the_run(stack: Stack) -> None:
    alice = stack.client("alice")
    release = stack.gate.gate(1)
    baseline = await consumers(stack)
    events = alice.invoke_stream("gated", "go")
    async with contextlib.aclosing(events):
        async with asyncio.timeout(GUARD_S):
            ack = await anext(events)
            first = await anext(events)
    assert isinstance(ack, StreamAck) and isinstance(first, StreamChunk) and first.seq == 1
    release.set()
    run = await stack.wait_run(ack.request_id, status="completed")
    assert run.result is not None and run.result.text == "part 0 part 1 part 2 "

    async def removed() -> bool:
        return await consumers(stack) == baseline

    await eventually(removed)


async def test_on_the_wire_the_request_streams_whatever_it_says(stack: Stack) -> None:
    """`stream: false` in the request still streams: InvokeStream always does."""
    request = types_pb2.InvokeRequest(
        agent_name="gated",
        content=[types_pb2.ContentPart(type="text", text="go")],
        session_id=new_id(),
        stream=False,
    )
    call = stack.stub().InvokeStream(
        pb.InvokeStreamRequest(request=request), metadata=auth("alice"), timeout=GUARD_S
    )
    replies = [reply async for reply in call]
    kinds = [reply.WhichOneof("event") for reply in replies]
    assert kinds == ["ack", "chunk", "chunk", "chunk", "chunk"]
    assert replies[0].ack.session_id == request.session_id and replies[0].ack.run_id
    assert replies[-1].chunk.type == "done"


async def test_an_invalid_request_is_refused_with_its_code(stack: Stack) -> None:
    request = types_pb2.InvokeRequest(
        agent_name="gated",
        content=[types_pb2.ContentPart(type="text", text="go")],
        session_id="not-a-uuid",
    )
    call = stack.stub().InvokeStream(
        pb.InvokeStreamRequest(request=request), metadata=auth("alice"), timeout=GUARD_S
    )
    error = await refused_stream(call)
    assert error.bem == "BEM-010"
    missing_token = stack.stub().InvokeStream(pb.InvokeStreamRequest(request=request))
    assert (await refused_stream(missing_token)).bem == "BEM-050"
