"""Where an agent's frames go, and the per-request sequence every sink shares."""

from __future__ import annotations

import abc
import asyncio
from typing import Protocol, runtime_checkable

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._subjects import request_id_token
from riverbeam.types import StreamChunk

__all__ = ["FrameSink", "SequencedSink"]


@runtime_checkable
class FrameSink(Protocol):
    """Receives the frames of one request, in order, the terminal (done/error) frame last."""

    async def publish(self, chunk: StreamChunk) -> None:
        """Deliver one frame; raises a RiverbeamError when it cannot."""
        ...


class SequencedSink(abc.ABC):
    """A FrameSink for one request that numbers its frames 1, 2, 3... and ends at the terminal frame.

    Each published frame is a copy of the given chunk with `seq` and `request_id` set. A frame
    whose delivery failed keeps its number: if it never landed, followers see the gap instead of
    a different frame under the same number. After a done or error frame is delivered, any further
    publish is refused. Concurrent publishes are serialised so numbers follow delivery order.
    """

    def __init__(self, request_id: str, *, start_after_seq: int = 0) -> None:
        if start_after_seq < 0:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "start_after_seq must be >= 0", field="start_after_seq"
            )
        self._request_id = request_id_token(request_id)
        # A second writer that continues a request (the reaper ending a dead runner's stream)
        # starts after the frames already stored.
        self._last_seq = start_after_seq
        self._terminal: StreamChunk | None = None
        self._lock = asyncio.Lock()

    @property
    def request_id(self) -> str:
        return self._request_id

    @property
    def last_seq(self) -> int:
        """The number given to the latest frame (0 before the first)."""
        return self._last_seq

    @property
    def terminal_frame(self) -> StreamChunk | None:
        """The done or error frame once it was delivered, else None."""
        return self._terminal

    @property
    def finished(self) -> bool:
        """True once a terminal frame was delivered."""
        return self._terminal is not None

    async def publish(self, chunk: StreamChunk) -> None:
        """Number the frame and deliver it.

        Raises:
            RiverbeamError: INTERNAL when a terminal frame was already delivered; whatever the
                delivery raises otherwise (STREAM_PUBLISH_FAILED for JetStream).
        """
        async with self._lock:
            if self._terminal is not None:
                raise RiverbeamError(
                    ErrorCode.INTERNAL,
                    f"frame {chunk.type!r} refused: the request already ended with "
                    f"a {self._terminal.type!r} frame",
                    request_id=self._request_id,
                    last_seq=self._last_seq,
                )
            self._last_seq += 1
            frame = chunk.model_copy(update={"seq": self._last_seq, "request_id": self._request_id})
            await self._deliver(frame)
            if frame.is_terminal:
                self._terminal = frame

    @abc.abstractmethod
    async def _deliver(self, frame: StreamChunk) -> None:
        """Deliver a numbered frame."""
