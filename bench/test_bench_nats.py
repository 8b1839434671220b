"""NATS JetStream: publishing one frame, and one frame's latency from publish to follower.

Baselines are nats-py calls on the same connection and stream: `js.publish` of the very bytes
our publisher sends, awaiting the ack, and an ordered push consumer reading them back. Ours are
`RequestPublisher.publish(StreamChunk)` (seq, Nats-Msg-Id, JSON) and `follow()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from nats.js import api
from nats.js.client import JetStreamContext

from bench._kit import BlockRunner, Case, compare, per_call
from bench._payloads import chunk_frame, done_frame
from riverbeam.stream import (
    MSG_ID_HEADER,
    NatsConnection,
    RequestPublisher,
    StreamConfig,
    ensure_stream,
    follow,
    msg_id_for,
)
from riverbeam.types import StreamChunk

pytestmark = [pytest.mark.slow, pytest.mark.nats, pytest.mark.timeout(300)]

CONFIG = StreamConfig(name="RIVERBEAM_BENCH", subject_prefix="riverbeam.bench", max_age_s=600.0)
RECEIVE_TIMEOUT_S = 10.0


@pytest.fixture
async def js(nats_url: str) -> AsyncIterator[JetStreamContext]:
    """A connection with a bench-only stream, deleted afterwards."""
    async with NatsConnection(nats_url, name="riverbeam-bench") as conn:
        await ensure_stream(conn.js, CONFIG)
        try:
            yield conn.js
        finally:
            with contextlib.suppress(Exception):
                await conn.js.delete_stream(CONFIG.name)


class _FramingOnly(RequestPublisher):
    """RequestPublisher with the I/O taken out: numbering, copy, msg id and JSON only."""

    async def _deliver(self, frame: StreamChunk) -> None:
        assert frame.seq is not None
        msg_id_for(self.request_id, frame.seq)
        frame.to_json().encode()


def _subject(request_id: str) -> str:
    return f"{CONFIG.subject_prefix}.{request_id}"


async def test_nats_publish(js: JetStreamContext) -> None:
    frame = chunk_frame()
    sample_id = str(uuid.uuid4())
    payload = frame.model_copy(update={"seq": 1, "request_id": sample_id}).to_json().encode()

    def bare(headers: bool) -> BlockRunner:
        state = {"seq": 0}
        subject = _subject(str(uuid.uuid4()))

        async def publish() -> None:
            state["seq"] += 1
            if headers:
                await js.publish(
                    subject,
                    payload,
                    stream=CONFIG.name,
                    headers={MSG_ID_HEADER: f"{sample_id}:{state['seq']}"},
                )
            else:
                await js.publish(subject, payload)

        return per_call(publish)

    async def ours(n: int) -> list[float]:
        # max_pending=0: each publish awaits its ack, as this section measures.
        publisher = RequestPublisher(js, str(uuid.uuid4()), config=CONFIG, max_pending=0)
        return await per_call(lambda: publisher.publish(frame))(n)

    async def framing(n: int) -> list[float]:
        publisher = _FramingOnly(js, str(uuid.uuid4()), config=CONFIG, max_pending=0)
        return await per_call(lambda: publisher.publish(frame))(n)

    await compare(
        "2a. JetStream publish of one frame, awaiting the ack",
        [
            Case(f"bare js.publish ({len(payload)} B)", bare(headers=False), baseline=True),
            Case(
                "bare js.publish + Nats-Msg-Id + expected stream",
                bare(headers=True),
                note="same headers as ours",
            ),
            Case(
                "RequestPublisher.publish(StreamChunk)",
                ours,
                note="seq, model_copy, JSON, headers",
            ),
            Case(
                "RequestPublisher framing only (no I/O)",
                framing,
                note="what ours adds in Python",
            ),
        ],
        n=2000,
        budget_s=4.0,
        caption="one subject per block; file-backed stream on a local nats-server",
    )


async def test_nats_publish_to_follower(js: JetStreamContext) -> None:
    frame = chunk_frame()
    payload = frame.model_copy(update={"seq": 1, "request_id": str(uuid.uuid4())})
    raw = payload.to_json().encode()

    async def bare(n: int) -> list[float]:
        subject = _subject(str(uuid.uuid4()))
        sub = await js.subscribe(
            subject,
            stream=CONFIG.name,
            ordered_consumer=True,
            deliver_policy=api.DeliverPolicy.ALL,
        )
        received: asyncio.Queue[float] = asyncio.Queue()

        async def consume() -> None:
            for _ in range(n + 1):
                await sub.next_msg(timeout=RECEIVE_TIMEOUT_S)
                received.put_nowait(time.perf_counter())

        task = asyncio.create_task(consume())
        try:
            await js.publish(subject, raw)  # primes the consumer, untimed
            await asyncio.wait_for(received.get(), RECEIVE_TIMEOUT_S)
            out: list[float] = []
            for _ in range(n):
                start = time.perf_counter()
                await js.publish(subject, raw)
                out.append(await asyncio.wait_for(received.get(), RECEIVE_TIMEOUT_S) - start)
            await task
            return out
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await sub.unsubscribe()

    async def ours(n: int) -> list[float]:
        request_id = str(uuid.uuid4())
        publisher = RequestPublisher(js, request_id, config=CONFIG)
        received: asyncio.Queue[float] = asyncio.Queue()

        async def consume() -> None:
            frames = follow(js, request_id, timeout_s=RECEIVE_TIMEOUT_S, config=CONFIG)
            async with contextlib.aclosing(frames):
                async for _ in frames:
                    received.put_nowait(time.perf_counter())

        task = asyncio.create_task(consume())
        try:
            await publisher.publish(frame)  # primes the follower, untimed
            await asyncio.wait_for(received.get(), RECEIVE_TIMEOUT_S)
            out: list[float] = []
            for _ in range(n):
                start = time.perf_counter()
                await publisher.publish(frame)
                out.append(await asyncio.wait_for(received.get(), RECEIVE_TIMEOUT_S) - start)
            await publisher.publish(done_frame())  # follow() ends after the terminal frame
            await asyncio.wait_for(task, RECEIVE_TIMEOUT_S)
            return out
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    await compare(
        "2b. One frame from publish to the follower (end to end, one in flight)",
        [
            Case("bare js.publish -> ordered consumer", bare, baseline=True),
            Case(
                "RequestPublisher.publish -> follow()",
                ours,
                note="+ StreamChunk parse and seq check",
            ),
        ],
        n=1000,
        budget_s=5.0,
        caption="latency = follower receives - publish starts; publish awaits its ack",
    )
