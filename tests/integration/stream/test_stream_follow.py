"""Publishing and following a request's frames through a real JetStream."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream import (
    MSG_ID_HEADER,
    NatsConnection,
    RequestPublisher,
    StreamConfig,
    follow,
    last_frame,
    last_seq,
    subject_for,
    subscribe_request,
)
from riverbeam.types import StreamChunk
from tests.integration.stream.frames import done_frame, error_frame, text_chunk

pytestmark = pytest.mark.nats

GUARD_S = 10  # a hang guard, not a timing assertion


async def collect(frames: object) -> list[StreamChunk]:
    out: list[StreamChunk] = []
    async with asyncio.timeout(GUARD_S):
        async for frame in frames:  # type: ignore[attr-defined]
            out.append(frame)
    return out


def has_count(frames: list[StreamChunk], n: int) -> bool:
    return len(frames) == n


async def publish_run(nats: NatsConnection, request_id: str, n_chunks: int) -> RequestPublisher:
    pub = RequestPublisher(nats.js, request_id)
    for i in range(n_chunks):
        await pub.publish(text_chunk(f"part {i}"))
    await pub.publish(done_frame())
    return pub


async def test_frames_arrive_in_order_with_gap_free_seqs(nats: NatsConnection) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 5)

    frames = await collect(follow(nats.js, request_id))

    assert [f.seq for f in frames] == [1, 2, 3, 4, 5, 6]
    assert [f.type for f in frames] == ["chunk"] * 5 + ["done"]
    assert [f.data.text for f in frames[:5] if f.data] == [f"part {i}" for i in range(5)]
    assert {f.request_id for f in frames} == {request_id}


async def test_stored_frame_is_the_seed_json_with_msg_id(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(done_frame("hi"))

    raw = await nats.js.get_last_msg("RIVERBEAM_STREAM", subject_for(request_id))

    assert raw.headers is not None and raw.headers[MSG_ID_HEADER] == f"{request_id}:1"
    body = json.loads(raw.data or b"")
    # Optional fields are omitted, not null.
    assert body == {
        "type": "done",
        "result": {
            "content": [{"type": "text", "text": "hi"}],
            "agent_name": "echo",
            "interrupted": False,
        },
        "agent_name": "echo",
        "seq": 1,
        "request_id": request_id,
    }


async def test_follower_joining_after_done_replays_everything_and_ends(
    nats: NatsConnection,
) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 3)

    first = await collect(follow(nats.js, request_id))
    second = await collect(follow(nats.js, request_id))

    assert [f.seq for f in first] == [1, 2, 3, 4]
    assert second == first


async def test_follower_joining_mid_run_gets_everything_live(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("before 1"))
    await pub.publish(text_chunk("before 2"))

    received: list[StreamChunk] = []
    seen = asyncio.Condition()

    async def follower() -> None:
        async for frame in follow(nats.js, request_id):
            async with seen:
                received.append(frame)
                seen.notify_all()

    async with asyncio.timeout(GUARD_S):
        task = asyncio.create_task(follower())
        async with seen:
            await seen.wait_for(lambda: len(received) == 2)
        # Lockstep: each frame reaches the follower before the next one exists.
        for i in range(3):
            await pub.publish(text_chunk(f"live {i}"))
            async with seen:
                await seen.wait_for(functools.partial(has_count, received, 3 + i))
        await pub.publish(done_frame())
        await task

    assert [f.seq for f in received] == [1, 2, 3, 4, 5, 6]
    assert received[-1].type == "done"


async def test_after_seq_resumes_after_the_cursor(nats: NatsConnection) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 4)

    frames = await collect(follow(nats.js, request_id, after_seq=2))
    assert [f.seq for f in frames] == [3, 4, 5]

    at_end = await collect(follow(nats.js, request_id, after_seq=4))
    assert [f.seq for f in at_end] == [5]


async def test_error_frame_ends_the_follow(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("a"))
    await pub.publish(error_frame("model failed"))

    frames = await collect(follow(nats.js, request_id))

    assert [(f.seq, f.type) for f in frames] == [(1, "chunk"), (2, "error")]
    assert frames[-1].error == "model failed"


async def test_a_missing_seq_is_a_gap(nats: NatsConnection) -> None:
    request_id = new_id()
    subject = subject_for(request_id)
    for seq in (1, 2, 4):
        frame = text_chunk(str(seq)).model_copy(update={"seq": seq, "request_id": request_id})
        await nats.js.publish(
            subject, frame.to_json().encode(), headers={MSG_ID_HEADER: f"{request_id}:{seq}"}
        )

    got: list[int | None] = []
    with pytest.raises(RiverbeamError) as info:
        async with asyncio.timeout(GUARD_S):
            async for frame in follow(nats.js, request_id):
                got.append(frame.seq)

    assert info.value.code is ErrorCode.STREAM_GAP
    assert got == [1, 2]
    assert info.value.details["expected_seq"] == "3"
    assert info.value.details["got_seq"] == "4"


async def test_repeated_seq_is_dropped(nats: NatsConnection) -> None:
    # Same seq under different msg ids (past the duplicate window, say): followers keep one.
    request_id = new_id()
    subject = subject_for(request_id)
    for n, frame in enumerate([text_chunk("a"), text_chunk("a again"), done_frame()]):
        seq = 1 if n < 2 else 2
        body = frame.model_copy(update={"seq": seq, "request_id": request_id}).to_json()
        await nats.js.publish(
            subject, body.encode(), headers={MSG_ID_HEADER: f"{request_id}:copy{n}"}
        )

    frames = await collect(follow(nats.js, request_id))

    assert [(f.seq, f.type) for f in frames] == [(1, "chunk"), (2, "done")]
    assert frames[0].data is not None and frames[0].data.text == "a"


async def test_unknown_request_is_not_found_after_wait_for_start(nats: NatsConnection) -> None:
    request_id = new_id()

    with pytest.raises(RiverbeamError) as info:
        await collect(follow(nats.js, request_id, wait_for_start_s=0.2))
    assert info.value.code is ErrorCode.STREAM_NOT_FOUND

    with pytest.raises(RiverbeamError) as info:
        await last_frame(nats.js, request_id)
    assert info.value.code is ErrorCode.STREAM_NOT_FOUND


async def test_wait_for_start_zero_still_follows_a_known_request(nats: NatsConnection) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 1)

    frames = await collect(follow(nats.js, request_id, wait_for_start_s=0))

    assert [f.seq for f in frames] == [1, 2]


async def test_idle_follower_times_out(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("only"))
    await pub.drain()  # stored before the follow starts (a non-terminal publish does not wait)

    got: list[int | None] = []
    with pytest.raises(RiverbeamError) as info:
        async with asyncio.timeout(GUARD_S):
            # Only the wait after the first frame is the idle one: the first may take its time.
            frames = follow(nats.js, request_id, timeout_s=0.2, wait_for_start_s=GUARD_S)
            async for frame in frames:
                got.append(frame.seq)

    assert info.value.code is ErrorCode.STREAM_TIMEOUT
    assert got == [1]


async def test_last_frame_and_last_seq(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("a"))
    await pub.drain()  # a non-terminal frame's publish does not wait for its ack
    assert await last_seq(nats.js, request_id) == 1
    await pub.publish(done_frame())

    last = await last_frame(nats.js, request_id)
    assert (last.seq, last.type) == (2, "done")


async def test_frame_that_is_not_stream_chunk_json_is_refused(nats: NatsConnection) -> None:
    request_id = new_id()
    await nats.js.publish(subject_for(request_id), b'{"type": "nonsense"}')

    with pytest.raises(RiverbeamError) as info:
        await collect(follow(nats.js, request_id))
    assert info.value.code is ErrorCode.INVALID_DOCUMENT


async def test_follow_of_a_missing_stream_is_not_found(nats: NatsConnection) -> None:
    config = StreamConfig(name="RIVERBEAM_NO_SUCH_STREAM", subject_prefix="riverbeam.nosuch")

    with pytest.raises(RiverbeamError) as info:
        await collect(follow(nats.js, new_id(), config=config))
    assert info.value.code is ErrorCode.STREAM_NOT_FOUND


async def test_bad_arguments_fail_at_call_time(nats: NatsConnection) -> None:
    with pytest.raises(RiverbeamError) as info:
        follow(nats.js, "riverbeam.stream.>")
    assert info.value.code is ErrorCode.INVALID_UUID
    with pytest.raises(RiverbeamError) as info:
        follow(nats.js, new_id(), after_seq=-1)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT


async def consumers_on(nats: NatsConnection, request_id: str) -> list[str]:
    infos = await nats.js.consumers_info("RIVERBEAM_STREAM")
    subject = subject_for(request_id)
    return [c.name for c in infos if c.config.filter_subject == subject]


async def test_cancelled_follower_removes_its_consumer(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("a"))
    got_first = asyncio.Event()

    async def follower() -> None:
        async for _ in follow(nats.js, request_id):
            got_first.set()

    async with asyncio.timeout(GUARD_S):
        task = asyncio.create_task(follower())
        await got_first.wait()
        assert len(await consumers_on(nats, request_id)) == 1
        subs_while_following = len(nats.nc._subs)

        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    assert await consumers_on(nats, request_id) == []
    assert len(nats.nc._subs) == subs_while_following - 1


async def test_follower_closed_early_removes_its_consumer(nats: NatsConnection) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 3)

    async with asyncio.timeout(GUARD_S):
        async with contextlib.aclosing(follow(nats.js, request_id)) as frames:
            async for frame in frames:
                assert frame.seq == 1
                assert len(await consumers_on(nats, request_id)) == 1
                break

    assert await consumers_on(nats, request_id) == []


async def test_follower_that_ends_removes_its_consumer(nats: NatsConnection) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 1)

    await collect(follow(nats.js, request_id))

    assert await consumers_on(nats, request_id) == []


async def test_a_subscription_made_before_the_frames_replays_and_follows_them(
    nats: NatsConnection,
) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("before"))
    subscription = await subscribe_request(nats.js, request_id)
    assert len(await consumers_on(nats, request_id)) == 1
    await pub.publish(text_chunk("after"))
    await pub.publish(done_frame())

    frames = await collect(follow(nats.js, request_id, after_seq=1, subscription=subscription))

    assert [f.seq for f in frames] == [2, 3]
    assert await consumers_on(nats, request_id) == []  # the follow removed it
    await subscription.aclose()  # and closing it again is a no-op


async def test_frames_already_delivered_are_taken_without_next_msg(
    nats: NatsConnection,
) -> None:
    """A replay's frames wait in the subscription's queue: each is taken from there, not through
    nats-py's next_msg (two tasks, a timer and a uuid per call); the queue's pending counts
    fall as next_msg's would. Only a wait for a frame not yet delivered calls next_msg."""
    waits: list[object] = []
    asked = asyncio.Event()

    def count_waits(sub: object) -> None:
        next_msg = sub.next_msg  # type: ignore[attr-defined]

        async def counted(**kwargs: float | None) -> object:
            waits.append(kwargs.get("timeout"))
            asked.set()
            return await next_msg(**kwargs)

        sub.next_msg = counted  # type: ignore[attr-defined]

    request_id = new_id()
    await publish_run(nats, request_id, 2)  # three frames stored
    subscription = await subscribe_request(nats.js, request_id)
    sub = subscription.sub
    async with asyncio.timeout(GUARD_S):
        while sub.pending_msgs < 3:  # noqa: ASYNC110 - nats-py signals no delivery to await
            await asyncio.sleep(0.005)
    sizes = [len(m.data) for m in list(sub._pending_queue._queue)]  # type: ignore[attr-defined]
    count_waits(sub)
    frames = follow(nats.js, request_id, subscription=subscription)
    async with contextlib.aclosing(frames):
        assert (await anext(frames)).seq == 1
        assert (sub.pending_msgs, sub.pending_bytes) == (2, sum(sizes[1:]))
        rest = [f.seq async for f in frames]

    assert rest == [2, 3]
    assert waits == []  # every frame was waiting in the queue
    assert await consumers_on(nats, request_id) == []

    # Live frames (none delivered when the follow asks) are waited for through next_msg.
    request_id = new_id()
    subscription = await subscribe_request(nats.js, request_id)
    count_waits(subscription.sub)
    live = asyncio.create_task(collect(follow(nats.js, request_id, subscription=subscription)))
    async with asyncio.timeout(GUARD_S):
        await asked.wait()
    await publish_run(nats, request_id, 1)
    assert [f.seq for f in await live] == [1, 2]
    assert len(waits) >= 1


async def test_the_deliver_subject_is_subscribed_before_the_consumer_is_made(
    nats: NatsConnection,
) -> None:
    """So the server delivers the first frame as soon as the consumer exists, not a trip later
    (js.subscribe creates the consumer, waits for the reply, then subscribes)."""
    request_id = new_id()
    await publish_run(nats, request_id, 1)
    nc = nats.nc
    said: list[tuple[str, str]] = []
    subscribe, request = nc.subscribe, nc.request

    async def subscribing(subject: str, *args: object, **kwargs: object) -> object:
        said.append(("SUB", subject))
        return await subscribe(subject, *args, **kwargs)  # type: ignore[arg-type]

    async def requesting(subject: str, payload: bytes = b"", **kwargs: object) -> object:
        if subject.startswith("$JS.API.CONSUMER.CREATE."):
            said.append(("CREATE", json.loads(payload)["config"]["deliver_subject"]))
        return await request(subject, payload, **kwargs)  # type: ignore[arg-type]

    nc.subscribe, nc.request = subscribing, requesting  # type: ignore[method-assign]
    try:
        subscription = await subscribe_request(nats.js, request_id)
    finally:
        del nc.subscribe, nc.request

    assert [kind for kind, _ in said] == ["SUB", "CREATE"]
    assert said[0][1] == said[1][1]  # the consumer delivers to that subscription
    assert await consumers_on(nats, request_id) == [subscription.sub._consumer]
    frames = await collect(follow(nats.js, request_id, subscription=subscription))
    assert [f.seq for f in frames] == [1, 2]
    assert await consumers_on(nats, request_id) == []


async def test_a_subscription_no_follow_takes_is_removed_by_aclose(nats: NatsConnection) -> None:
    request_id = new_id()
    await publish_run(nats, request_id, 1)
    subscription = await subscribe_request(nats.js, request_id)
    assert len(await consumers_on(nats, request_id)) == 1

    await subscription.aclose()

    assert await consumers_on(nats, request_id) == []
    with pytest.raises(RiverbeamError) as info:
        follow(nats.js, new_id(), subscription=subscription)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT  # another request's subscription
