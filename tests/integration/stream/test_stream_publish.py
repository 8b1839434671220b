"""RequestPublisher against a real JetStream: dedup, retries, the terminal frame."""

from __future__ import annotations

import asyncio
from typing import Any

import nats.errors
import pytest
from nats.js.client import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream import (
    MSG_ID_HEADER,
    NatsConnection,
    RequestPublisher,
    follow,
    subject_for,
)
from riverbeam.types import StreamChunk
from tests.integration.stream.frames import done_frame, error_frame, text_chunk

pytestmark = pytest.mark.nats

GUARD_S = 10


async def follow_all(js: JetStreamContext, request_id: str) -> list[StreamChunk]:
    async with asyncio.timeout(GUARD_S):
        return [frame async for frame in follow(js, request_id)]


async def stored_count(nats: NatsConnection, request_id: str) -> int:
    info = await nats.js.stream_info("RIVERBEAM_STREAM", subjects_filter=subject_for(request_id))
    return sum((info.state.subjects or {}).values())


class LostAcks:
    """A JetStream context whose publish reaches the server, but whose first acks are 'lost'."""

    def __init__(self, js: JetStreamContext, lose: int) -> None:
        self._js = js
        self._lose = lose
        self.msg_ids: list[str] = []

    async def publish(self, subject: str, payload: bytes, **kwargs: Any) -> Any:
        self.msg_ids.append(kwargs["headers"][MSG_ID_HEADER])
        ack = await self._js.publish(subject, payload, **kwargs)
        if self._lose > 0:
            self._lose -= 1
            raise nats.errors.TimeoutError
        return ack


class Unreachable:
    """A JetStream context whose every publish times out without reaching the server."""

    def __init__(self) -> None:
        self.msg_ids: list[str] = []

    async def publish(self, subject: str, payload: bytes, **kwargs: Any) -> Any:
        self.msg_ids.append(kwargs["headers"][MSG_ID_HEADER])
        raise nats.errors.TimeoutError


async def test_same_msg_id_is_stored_once(nats: NatsConnection) -> None:
    request_id = new_id()
    subject = subject_for(request_id)
    body = done_frame().model_copy(update={"seq": 1, "request_id": request_id}).to_json().encode()
    headers = {MSG_ID_HEADER: f"{request_id}:1"}

    first = await nats.js.publish(subject, body, headers=dict(headers))
    second = await nats.js.publish(subject, body, headers=dict(headers))

    assert not first.duplicate
    assert second.duplicate and second.seq == first.seq
    assert await stored_count(nats, request_id) == 1
    assert [f.seq for f in await follow_all(nats.js, request_id)] == [1]


async def test_retry_after_a_lost_ack_is_deduplicated(nats: NatsConnection) -> None:
    request_id = new_id()
    flaky = LostAcks(nats.js, lose=2)
    pub = RequestPublisher(flaky, request_id, backoff_s=0.01)  # type: ignore[arg-type]

    await pub.publish(text_chunk("a"))
    await pub.publish(done_frame())

    # Frame 1 went out three times under one id; the stream kept it once.
    assert flaky.msg_ids == [f"{request_id}:1"] * 3 + [f"{request_id}:2"]
    assert await stored_count(nats, request_id) == 2
    assert [f.seq for f in await follow_all(nats.js, request_id)] == [1, 2]


async def test_publish_gives_up_after_bounded_attempts() -> None:
    request_id = new_id()
    dead = Unreachable()
    pub = RequestPublisher(dead, request_id, attempts=3, backoff_s=0.01)  # type: ignore[arg-type]

    await pub.publish(text_chunk("a"))  # queued: its publish does not wait for the ack
    with pytest.raises(RiverbeamError) as info:
        await pub.drain()

    assert info.value.code is ErrorCode.STREAM_PUBLISH_FAILED
    assert dead.msg_ids == [f"{request_id}:1"] * 3
    assert not pub.finished
    # The failed frame keeps its number: a later frame is 2, so followers see the gap.
    with pytest.raises(RiverbeamError):
        await pub.publish(error_frame())
    assert dead.msg_ids[-1] == f"{request_id}:2"


async def test_nothing_is_published_after_the_terminal_frame(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)
    await pub.publish(text_chunk("a"))
    await pub.publish(done_frame())

    for late in (text_chunk("late"), done_frame(), error_frame()):
        with pytest.raises(RiverbeamError) as info:
            await pub.publish(late)
        assert info.value.code is ErrorCode.INTERNAL

    assert pub.finished and pub.last_seq == 2
    assert await stored_count(nats, request_id) == 2
    assert [f.type for f in await follow_all(nats.js, request_id)] == ["chunk", "done"]


async def test_second_writer_of_a_request_is_refused(nats: NatsConnection) -> None:
    request_id = new_id()
    first = RequestPublisher(nats.js, request_id)
    await first.publish(text_chunk("first writer"))
    await first.drain()

    second = RequestPublisher(nats.js, request_id)
    await second.publish(text_chunk("second writer"))
    with pytest.raises(RiverbeamError) as info:
        await second.drain()

    assert info.value.code is ErrorCode.REQUEST_ID_REUSED
    assert await stored_count(nats, request_id) == 1


async def test_publish_to_a_subject_no_stream_captures_fails(nats: NatsConnection) -> None:
    from riverbeam.stream import StreamConfig

    config = StreamConfig(name="RIVERBEAM_NOT_CREATED", subject_prefix="riverbeam.notcreated")
    pub = RequestPublisher(nats.js, new_id(), config=config, attempts=2, backoff_s=0.01)

    await pub.publish(text_chunk("a"))
    with pytest.raises(RiverbeamError) as info:
        await pub.drain()
    assert info.value.code is ErrorCode.STREAM_PUBLISH_FAILED


async def test_concurrent_publishes_are_numbered_in_order(nats: NatsConnection) -> None:
    request_id = new_id()
    pub = RequestPublisher(nats.js, request_id)

    await asyncio.gather(*(pub.publish(text_chunk(str(i))) for i in range(20)))
    await pub.publish(done_frame())

    frames = await follow_all(nats.js, request_id)
    assert [f.seq for f in frames] == list(range(1, 22))
