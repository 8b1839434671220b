"""An in-process frame sink for tests: keeps the frames and lets a test await them."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream._sink import SequencedSink
from riverbeam.types import StreamChunk

__all__ = ["MemorySink"]


class MemorySink(SequencedSink):
    """Keeps one request's frames in a list, numbered exactly as `RequestPublisher` numbers them.

    Bound waits with `asyncio.timeout` in tests; they wait forever otherwise.
    """

    def __init__(self, request_id: str | None = None) -> None:
        super().__init__(request_id if request_id is not None else new_id())
        self._frames: list[StreamChunk] = []
        self._changed = asyncio.Condition()

    @property
    def frames(self) -> list[StreamChunk]:
        """A copy of the frames delivered so far."""
        return list(self._frames)

    async def _deliver(self, frame: StreamChunk) -> None:
        async with self._changed:
            self._frames.append(frame)
            self._changed.notify_all()

    async def wait_for(self, count: int) -> list[StreamChunk]:
        """Wait until at least `count` frames were delivered; return them all."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self._frames) >= count)
            return list(self._frames)

    async def wait_terminal(self) -> StreamChunk:
        """Wait for the done or error frame and return it."""
        async with self._changed:
            # The frame is stored (and waiters woken) before the base class records it as
            # terminal, so look at the frames themselves: the terminal frame is always last.
            await self._changed.wait_for(
                lambda: bool(self._frames) and self._frames[-1].is_terminal
            )
            return self._frames[-1]

    def _has_more_than(self, count: int) -> bool:
        return len(self._frames) > count

    async def follow(self, *, after_seq: int = 0) -> AsyncIterator[StreamChunk]:
        """Frames after `after_seq`, then live ones, ending after the terminal frame."""
        if after_seq < 0:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "after_seq must be >= 0", field="after_seq"
            )
        index = after_seq
        while True:
            async with self._changed:
                await self._changed.wait_for(functools.partial(self._has_more_than, index))
                frame = self._frames[index]
            index += 1
            yield frame
            if frame.is_terminal:
                return
