"""Following a request's frames straight from NATS JetStream, without the router."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from riverbeam.client._sequence import SequenceGuard
from riverbeam.stream import DEFAULT_STREAM_NAME, NatsConnection, StreamConfig, follow
from riverbeam.types import StreamChunk

__all__ = ["follow_nats"]


async def follow_nats(
    nats_url: str,
    request_id: str,
    *,
    after_seq: int = 0,
    stream_name: str = DEFAULT_STREAM_NAME,
    timeout_s: float | None = None,
    wait_for_start_s: float | None = 30.0,
    connect_timeout_s: float = 10.0,
) -> AsyncGenerator[StreamChunk, None]:
    """The frames of a request, read from `riverbeam.stream.<request_id>` on JetStream.

    Replays the stored frames after `after_seq`, then follows live ones, and ends after the
    done or error frame. Duplicates are dropped and a missing frame raises STREAM_GAP.

    Args:
        nats_url: The NATS server (`nats://host:4222`).
        request_id: The request's UUID (`StreamAck.request_id`).
        after_seq: Skip frames up to and including this sequence number.
        stream_name: The JetStream stream (`StreamAck.stream_name`).
        timeout_s: Longest wait for the next frame; None waits as long as it takes.
        wait_for_start_s: Longest wait for the first frame before the request is called
            unknown (STREAM_NOT_FOUND).
        connect_timeout_s: Longest wait for the NATS connection.

    Raises:
        RiverbeamError: STREAM_GAP, STREAM_TIMEOUT, STREAM_NOT_FOUND, INVALID_UUID, or INTERNAL
            when NATS cannot be reached.
    """
    config = StreamConfig(name=stream_name)
    guard = SequenceGuard(request_id, after_seq)
    async with NatsConnection(
        nats_url, name="riverbeam-client", initial_connect_timeout_s=connect_timeout_s
    ) as conn:
        frames = follow(
            conn.js,
            request_id,
            after_seq=after_seq,
            timeout_s=timeout_s,
            wait_for_start_s=wait_for_start_s,
            config=config,
        )
        async with contextlib.aclosing(frames):
            async for frame in frames:
                if not guard.accept(frame):
                    continue
                yield frame
                if frame.is_terminal:
                    return
