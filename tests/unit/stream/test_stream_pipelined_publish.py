"""RequestPublisher's pipelined delivery, counted on a JetStream that answers when told to."""

from __future__ import annotations

import asyncio

import nats.errors
import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream import RequestPublisher
from riverbeam.types import StreamChunk
from tests.support.frames import chunk, done, error
from tests.support.gated_jetstream import WRONG_LAST_SEQUENCE, GatedJetStream, let_run

GUARD_S = 5  # a hang guard, not a timing assertion


def publisher(js: GatedJetStream, **kwargs: object) -> RequestPublisher:
    return RequestPublisher(js, new_id(), **kwargs)  # type: ignore[arg-type]


def delivery_tasks() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("frames ")]


async def test_a_non_terminal_publish_returns_before_its_ack() -> None:
    js = GatedJetStream()
    pub = publisher(js)

    async with asyncio.timeout(GUARD_S):
        await pub.publish(chunk("a"))
        await pub.publish(chunk("b"))
        await js.wait_sent(1)
    await let_run()

    # Both calls returned; frame 1 is on the wire unanswered, frame 2 waits behind it.
    assert (pub.last_seq, pub.pending, js.in_flight, len(js.stored)) == (2, 2, 1, 0)
    async with asyncio.timeout(GUARD_S):
        js.ack()
        await js.wait_sent(2)
        js.ack()
        await pub.drain()
    assert [s.msg_id for s in js.stored] == [f"{pub.request_id}:1", f"{pub.request_id}:2"]
    assert pub.pending == 0


async def test_frames_go_out_one_at_a_time_in_order_each_chained_on_the_previous_ack() -> None:
    js = GatedJetStream()
    pub = publisher(js)
    for i in range(3):
        await pub.publish(chunk(str(i)))

    async with asyncio.timeout(GUARD_S):
        terminal = asyncio.create_task(pub.publish(done()))
        for n in range(1, 4):
            await js.wait_sent(n)
            await let_run()
            # Never two frames in flight, and the terminal waits for every earlier ack.
            assert (len(js.sent), js.in_flight) == (n, 1)
            assert not terminal.done()
            js.ack()
        await js.wait_sent(4)
        await let_run()
        # The terminal frame is on the wire; its publish returns only with its own ack.
        assert not terminal.done() and not pub.finished
        js.ack()
        await terminal

    rid = pub.request_id
    assert [s.msg_id for s in js.sent] == [f"{rid}:{n}" for n in range(1, 5)]
    assert [s.expected_last for s in js.sent] == ["0", "1", "2", "3"]
    assert pub.finished and pub.terminal_frame is not None and pub.terminal_frame.seq == 4
    assert delivery_tasks() == []


async def test_a_fenced_frame_is_raised_by_the_next_publish_and_nothing_after_it_is_sent() -> None:
    js = GatedJetStream()
    pub = publisher(js)
    for i in range(3):
        await pub.publish(chunk(str(i)))

    async with asyncio.timeout(GUARD_S):
        await js.wait_sent(1)
        js.ack()
        await js.wait_sent(2)
        js.refuse(WRONG_LAST_SEQUENCE)  # another writer published on the request
        await let_run()

        with pytest.raises(RiverbeamError) as info:
            await pub.publish(chunk("after the fence"))
        assert info.value.code is ErrorCode.STREAM_FENCED
        # A fenced sink refuses everything later without sending it, the terminal frame too.
        for late in (chunk("late"), done(), error()):
            with pytest.raises(RiverbeamError) as again:
                await pub.publish(late)
            assert again.value.code is ErrorCode.STREAM_FENCED

    rid = pub.request_id
    assert [s.msg_id for s in js.sent] == [f"{rid}:1", f"{rid}:2"]  # frame 3 never went out
    assert pub.last_seq == 3 and not pub.finished
    assert delivery_tasks() == []


async def test_a_failed_frame_is_raised_by_the_terminal_publish_which_sends_nothing() -> None:
    js = GatedJetStream()
    pub = publisher(js, attempts=1)
    await pub.publish(chunk("a"))
    await pub.publish(chunk("b"))

    async with asyncio.timeout(GUARD_S):
        await js.wait_sent(1)
        js.refuse(nats.errors.TimeoutError())
        with pytest.raises(RiverbeamError) as info:
            await pub.publish(done())

    assert info.value.code is ErrorCode.STREAM_PUBLISH_FAILED
    assert info.value.details.get("seq") == "1"  # the first failure, not a later frame's
    assert [s.msg_id for s in js.sent] == [f"{pub.request_id}:1"]
    assert not pub.finished
    # Told once: the failed frames keep their numbers and an error frame may still end it.
    async with asyncio.timeout(GUARD_S):
        ending = asyncio.create_task(pub.publish(error()))
        await js.wait_sent(2)
        js.ack()
        await ending
    assert js.sent[-1].msg_id == f"{pub.request_id}:3"
    assert pub.finished


async def test_a_publish_that_raises_an_earlier_failure_does_not_number_its_frame() -> None:
    js = GatedJetStream()
    pub = publisher(js, attempts=1)
    await pub.publish(chunk("a"))

    async with asyncio.timeout(GUARD_S):
        await js.wait_sent(1)
        js.refuse(nats.errors.TimeoutError())
        await let_run()
        with pytest.raises(RiverbeamError) as info:
            await pub.publish(chunk("b"))

    assert info.value.code is ErrorCode.STREAM_PUBLISH_FAILED
    assert pub.last_seq == 1 and len(js.sent) == 1


async def test_publish_waits_while_max_pending_frames_are_queued() -> None:
    js = GatedJetStream()
    pub = publisher(js, max_pending=2)
    await pub.publish(chunk("1"))
    await pub.publish(chunk("2"))

    async with asyncio.timeout(GUARD_S):
        third = asyncio.create_task(pub.publish(chunk("3")))
        await js.wait_sent(1)
        await let_run()
        # Full: the third call waits, unnumbered, until a frame is acknowledged.
        assert not third.done()
        assert (pub.last_seq, pub.pending) == (2, 2)
        js.ack()
        await third
        assert (pub.last_seq, pub.pending) == (3, 2)
        for n in (2, 3):
            await js.wait_sent(n)
            js.ack()
        await pub.drain()
    assert [s.expected_last for s in js.sent] == ["0", "1", "2"]


async def test_concurrent_publishes_keep_call_order_on_the_wire() -> None:
    js = GatedJetStream()
    pub = publisher(js, max_pending=4)

    async with asyncio.timeout(GUARD_S):
        calls = asyncio.gather(*(pub.publish(chunk(str(i))) for i in range(10)))
        for n in range(1, 11):
            await js.wait_sent(n)
            js.ack()
        await calls
        await pub.drain()

    assert [s.msg_id for s in js.sent] == [f"{pub.request_id}:{n}" for n in range(1, 11)]
    texts = [StreamChunk.model_validate_json(s.payload).data for s in js.sent]
    assert [t.content[0].text for t in texts if t is not None] == [str(i) for i in range(10)]


async def test_aclose_ends_the_delivery_of_a_sink_that_never_sees_its_terminal_frame() -> None:
    js = GatedJetStream()
    pub = publisher(js)
    await pub.publish(chunk("a"))
    await pub.publish(chunk("b"))
    async with asyncio.timeout(GUARD_S):
        await js.wait_sent(1)
    assert len(delivery_tasks()) == 1

    async with asyncio.timeout(GUARD_S):
        await pub.aclose()
        await pub.aclose()  # idempotent

    assert delivery_tasks() == []
    assert pub.pending == 0 and len(js.sent) == 1  # frame 2 was dropped, never sent


async def test_a_continuing_writer_confirms_its_first_frame_before_returning() -> None:
    js = GatedJetStream()
    pub = publisher(js, start_after_seq=5)

    async with asyncio.timeout(GUARD_S):
        first = asyncio.create_task(pub.publish(chunk("recovered")))
        await js.wait_sent(1)
        await let_run()
        # Deduplicated by number only, so its caller must see a BEM-031 at this publish.
        assert not first.done()
        js.ack()
        await first
        await pub.publish(chunk("next"))  # chained on that ack: queued
        await js.wait_sent(2)
    assert [(s.msg_id, s.expected_last) for s in js.sent] == [
        (f"{pub.request_id}:6", None),
        (f"{pub.request_id}:7", "1"),
    ]
    await pub.aclose()


async def test_an_unpipelined_publisher_awaits_every_ack() -> None:
    js = GatedJetStream()
    pub = publisher(js, max_pending=0)

    async with asyncio.timeout(GUARD_S):
        first = asyncio.create_task(pub.publish(chunk("a")))
        await js.wait_sent(1)
        await let_run()
        assert not first.done()
        js.ack()
        await first
    assert delivery_tasks() == []


def test_max_pending_must_not_be_negative() -> None:
    with pytest.raises(RiverbeamError) as info:
        RequestPublisher(GatedJetStream(), new_id(), max_pending=-1)  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
