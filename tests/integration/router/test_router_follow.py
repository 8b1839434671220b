"""FollowStream relays exactly what a direct JetStream subscriber sees, whenever it joins."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream import follow
from riverbeam.types import StreamChunk
from riverbeam.v1 import riverbeam_service_pb2 as pb
from tests.integration.router.router_kit import (
    GUARD_S,
    Stack,
    auth,
    collect,
    eventually,
    refused_stream,
)

pytestmark = pytest.mark.nats


def direct(stack: Stack, request_id: str, after_seq: int = 0) -> AsyncIterator[StreamChunk]:
    """A subscriber straight on JetStream, as a client without the router would read."""
    return follow(stack.nats.js, request_id, after_seq=after_seq, config=stack.stream_config)


async def consumers(stack: Stack) -> int:
    info = await stack.nats.js.stream_info(stack.stream_config.name)
    return info.state.consumer_count


async def test_a_follower_that_joins_before_the_first_frame(stack: Stack) -> None:
    alice = stack.client("alice")
    first = stack.gate.gate(0)
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.gate.reached[0].wait()  # the run is live and has published nothing
    baseline = await consumers(stack)

    relayed = asyncio.create_task(collect(alice.follow(ack.request_id)))
    straight = asyncio.create_task(collect(direct(stack, ack.request_id)))

    async def both_subscribed() -> bool:
        return await consumers(stack) >= baseline + 2

    await eventually(both_subscribed)
    assert not relayed.done() and not straight.done()
    first.set()
    frames = await relayed
    assert frames == await straight
    assert [f.type for f in frames] == ["chunk", "chunk", "chunk", "done"]
    assert [f.seq for f in frames] == [1, 2, 3, 4]


async def test_a_follower_that_joins_during_the_run(stack: Stack) -> None:
    alice = stack.client("alice")
    rest = stack.gate.gate(2)
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.gate.reached[2].wait()  # two frames are out, the third waits on the gate

    relayed: list[StreamChunk] = []
    straight: list[StreamChunk] = []

    async def read(frames: AsyncIterator[StreamChunk], into: list[StreamChunk]) -> None:
        async with contextlib.aclosing(frames):  # type: ignore[type-var]
            async for frame in frames:
                into.append(frame)

    tasks = [
        asyncio.create_task(read(alice.follow(ack.request_id), relayed)),
        asyncio.create_task(read(direct(stack, ack.request_id), straight)),
    ]

    async def caught_up() -> bool:
        return len(relayed) == 2 and len(straight) == 2

    await eventually(caught_up)  # both replayed what was stored and now wait live
    rest.set()
    async with asyncio.timeout(GUARD_S):
        await asyncio.gather(*tasks)
    assert relayed == straight
    assert [f.seq for f in relayed] == [1, 2, 3, 4] and relayed[-1].type == "done"
    assert relayed[-1].result is not None
    assert relayed[-1].result.text == "part 0 part 1 part 2 "


async def test_a_follower_that_joins_after_the_run(stack: Stack) -> None:
    alice = stack.client("alice")
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.wait_run(ack.request_id)

    frames = await collect(alice.follow(ack.request_id))

    assert frames == await collect(direct(stack, ack.request_id))
    assert frames[-1].type == "done" and len(frames) == 4
    # Every frame carries the request's correlation ids.
    assert {(f.request_id, f.session_id, f.interaction_id) for f in frames} == {
        (ack.request_id, ack.session_id, ack.interaction_id)
    }


async def test_a_follow_asks_jetstream_for_one_consumer_and_nothing_else(stack: Stack) -> None:
    """No stream lookup by subject, no stream info: a consumer made, and removed after the end."""
    alice = stack.client("alice")
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.wait_run(ack.request_id)
    asked: list[str] = []

    async def note(msg: Any) -> None:
        kind = msg.subject.removeprefix("$JS.API.")
        if kind.startswith("STREAM.NAMES") or stack.stream_config.name in kind:
            asked.append(".".join(kind.split(".")[:2]))

    sub = await stack.nats.nc.subscribe("$JS.API.>", cb=note)
    await stack.nats.nc.flush()
    try:
        frames = await collect(alice.follow(ack.request_id))

        async def removed() -> bool:
            return "CONSUMER.DELETE" in asked

        await eventually(removed)
    finally:
        await sub.unsubscribe()
    assert frames[-1].type == "done" and len(frames) == 4
    assert asked == ["CONSUMER.CREATE", "CONSUMER.DELETE"]


async def test_the_after_seq_cursor_skips_what_the_caller_has(stack: Stack) -> None:
    alice = stack.client("alice")
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.wait_run(ack.request_id)
    every = await collect(direct(stack, ack.request_id))

    assert await collect(alice.follow(ack.request_id, after_seq=2)) == every[2:]
    assert await collect(direct(stack, ack.request_id, after_seq=2)) == every[2:]
    # The raw relay applies the cursor itself.
    raw = stack.stub().FollowStream(
        pb.FollowStreamRequest(request_id=ack.request_id, after_seq=3), metadata=auth("alice")
    )
    chunks = [StreamChunk.from_proto(reply.chunk) async for reply in raw]
    assert chunks == every[3:]


async def test_error_frames_are_relayed_as_frames(stack: Stack) -> None:
    alice = stack.client("alice")
    # No script step left: the model call fails, the agent ends with an error frame.
    ack = await alice.invoke("author", "go", stream=True)

    frames = await collect(alice.follow(ack.request_id))

    assert frames == await collect(direct(stack, ack.request_id))
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-081"
    run = await stack.wait_run(ack.request_id)
    assert (run.status, run.error_code) == ("failed", "BEM-081")


async def test_an_unknown_request_is_refused_with_error_info(stack: Stack) -> None:
    stub = stack.stub()
    error = await refused_stream(
        stub.FollowStream(
            pb.FollowStreamRequest(request_id=str(uuid.uuid4())), metadata=auth("alice")
        )
    )
    assert (error.code, error.bem, error.domain) == (
        grpc.StatusCode.NOT_FOUND,
        "BEM-032",
        "riverbeam",
    )
    with pytest.raises(RiverbeamError) as info:
        await collect(stack.client("alice").follow(str(uuid.uuid4())))
    assert info.value.code is ErrorCode.REQUEST_NOT_FOUND
    error = await refused_stream(
        stub.FollowStream(pb.FollowStreamRequest(request_id="not-a-uuid"), metadata=auth("alice"))
    )
    assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-010")


async def test_a_cancelled_run_ends_its_relay_with_the_error_frame(stack: Stack) -> None:
    alice = stack.client("alice")
    stack.gate.gate(1)  # never opened
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.gate.reached[1].wait()
    relay = asyncio.create_task(collect(alice.follow(ack.request_id)))

    assert await alice.cancel(ack.request_id)

    frames = await relay
    assert [f.type for f in frames] == ["chunk", "error"]
    assert frames[-1].error_code == "BEM-033"
    assert frames == await collect(direct(stack, ack.request_id))


async def test_a_follower_that_leaves_early_leaves_no_consumer(stack: Stack) -> None:
    alice = stack.client("alice")
    opened = stack.gate.gate(1)
    ack = await alice.invoke("gated", "go", stream=True)
    await stack.gate.reached[1].wait()
    baseline = await consumers(stack)

    frames = alice.follow(ack.request_id)
    first = await anext(frames)
    assert first.seq == 1
    assert await consumers(stack) == baseline + 1  # the router's, for this relay
    await frames.aclose()  # the caller hangs up

    async def released() -> bool:
        return await consumers(stack) == baseline

    await eventually(released)
    opened.set()
    assert (await stack.wait_run(ack.request_id)).status == "completed"


async def test_a_refused_follower_leaves_no_consumer(stack: Stack) -> None:
    """The consumer made beside the access check is removed before the refusal is answered."""
    ack = await stack.client("alice").invoke("gated", "go", stream=True)
    await stack.wait_run(ack.request_id)
    baseline = await consumers(stack)

    for who, request_id in (("bob", ack.request_id), ("alice", str(uuid.uuid4()))):
        error = await refused_stream(
            stack.stub().FollowStream(
                pb.FollowStreamRequest(request_id=request_id), metadata=auth(who)
            )
        )
        assert (error.code, error.bem) == (grpc.StatusCode.NOT_FOUND, "BEM-032")
        assert await consumers(stack) == baseline


async def test_a_negative_cursor_is_refused(stack: Stack) -> None:
    alice = stack.client("alice")
    ack = await alice.invoke("assistant", "hi", stream=True)
    await stack.wait_run(ack.request_id)
    error = await refused_stream(
        stack.stub().FollowStream(
            pb.FollowStreamRequest(request_id=ack.request_id, after_seq=-1),
            metadata=auth("alice"),
        )
    )
    assert (error.code, error.bem) == (grpc.StatusCode.INVALID_ARGUMENT, "BEM-002")
