"""Where a run's frames go: NATS JetStream in services, memory in tests, nowhere when not streaming."""

from __future__ import annotations

import logging
from typing import Protocol

from riverbeam.core.errors import RiverbeamError
from riverbeam.stream import StreamConfig
from riverbeam.types import StreamChunk

__all__ = [
    "CollectingSink",
    "CountingSink",
    "FrameSink",
    "SinkFactory",
    "close_sink",
    "confirm_frames",
    "confirm_frames_before_finish",
]

log = logging.getLogger("riverbeam.pipeline")


class FrameSink(Protocol):
    """Publishes one request's frames in order."""

    async def publish(self, chunk: StreamChunk) -> None: ...


async def confirm_frames(sink: FrameSink) -> None:
    """Wait until every frame published to the sink so far is stored (a sink that queues
    frames, see SequencedSink); raises the first delivery error not raised yet.

    The run's records rely on it: a finished run's frames before its terminal one are all on
    the stream (FollowStream ends a finished run's quiet stream right after its last stored
    frame), and a checkpoint covers only frames that are stored.
    """
    drain = getattr(sink, "drain", None)
    if drain is not None:
        await drain()


async def confirm_frames_before_finish(sink: FrameSink, run_id: str) -> None:
    """confirm_frames for a run that ends otherwise than by its agent's terminal frame (it
    failed, was cancelled): a delivery error is logged, and the run ends as it was going to."""
    try:
        await confirm_frames(sink)
    except RiverbeamError as err:
        log.error("frames of %s not all published: %s", run_id, err)


async def close_sink(sink: FrameSink) -> None:
    """End a run's sink: stop the background delivery of one that queues frames (a run that
    ends without its terminal frame leaves nothing running). Sinks that deliver each frame
    in its publish() have nothing to end."""
    aclose = getattr(sink, "aclose", None)
    if aclose is not None:
        await aclose()


class SinkFactory(Protocol):
    """Opens the sink of a request, and ends requests whose runner died."""

    @property
    def stream(self) -> StreamConfig:
        """The stream (name, subject prefix) this factory's frames go to."""
        ...

    async def open(self, request_id: str, *, stream: bool) -> FrameSink: ...

    async def continue_stream(self, request_id: str, *, stream: bool) -> tuple[FrameSink, int]:
        """A sink for a request another runner began: it numbers its frames after the last
        one stored for the request (returned too), read from the stream itself."""
        ...

    async def publish_terminal_error(self, request_id: str, error: RiverbeamError) -> None:
        """Publish a final error frame after whatever frames the request already has."""
        ...


class CollectingSink:
    """Keeps frames in a list (a non-streaming request, or a test)."""

    def __init__(self) -> None:
        self.frames: list[StreamChunk] = []

    @property
    def last_seq(self) -> int:
        return len(self.frames)

    async def publish(self, chunk: StreamChunk) -> None:
        self.frames.append(chunk.model_copy(update={"seq": len(self.frames) + 1}))


class CountingSink:
    """Numbers a non-streaming request's frames and keeps none (JetStreamSinks): nobody can
    follow them, and the caller's reply carries the result. `last_seq` is what a checkpoint
    records, as with CollectingSink."""

    __slots__ = ("last_seq",)

    def __init__(self) -> None:
        self.last_seq = 0

    async def publish(self, chunk: StreamChunk) -> None:
        self.last_seq += 1
