"""The router's frames over NATS JetStream: replay then follow a request's frames.

Apart from the runner's sinks (_jetstream.py) so that the router, which only reads frames,
does not import the publisher (issue 16: idle RSS).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from nats.js import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream import (
    RequestSubscription,
    StreamConfig,
    follow,
    last_frame,
    subscribe_request,
)
from riverbeam.types import StreamChunk

__all__ = ["JetStreamFrames", "SubscribedFrames"]


class JetStreamFrames:
    """The router's FramesPort: replay then follow a request's frames."""

    def __init__(
        self, js: JetStreamContext, config: StreamConfig, *, wait_for_start_s: float = 30.0
    ) -> None:
        self._js = js
        self._config = config
        self._wait_for_start_s = wait_for_start_s

    async def follow(
        self,
        request_id: str,
        *,
        after_seq: int = 0,
        idle_timeout_s: float | None = None,
        wait_for_start_s: float | None = None,
        subscription: RequestSubscription | None = None,
    ) -> AsyncIterator[StreamChunk]:
        frames = follow(
            self._js,
            request_id,
            after_seq=after_seq,
            timeout_s=idle_timeout_s,
            wait_for_start_s=self._wait_for_start_s
            if wait_for_start_s is None
            else wait_for_start_s,
            config=self._config,
            subscription=subscription,
        )
        try:
            async for frame in frames:
                yield frame
        finally:
            await frames.aclose()

    async def subscribe(self, request_id: str) -> SubscribedFrames:
        """The request's consumer, made now; read it with `frames` once the limits are known."""
        subscription = await subscribe_request(self._js, request_id, config=self._config)
        return SubscribedFrames(self, request_id, subscription)

    async def last_frame(self, request_id: str) -> StreamChunk | None:
        """The latest frame stored for the request, or None when none is stored."""
        try:
            return await last_frame(self._js, request_id, config=self._config)
        except RiverbeamError as err:
            if err.code is ErrorCode.STREAM_NOT_FOUND:
                return None
            raise


class SubscribedFrames:
    """A request's frames with the consumer already made (JetStreamFrames.subscribe)."""

    def __init__(
        self, frames: JetStreamFrames, request_id: str, subscription: RequestSubscription
    ) -> None:
        self._frames = frames
        self._request_id = request_id
        self._subscription = subscription

    def frames(
        self, *, after_seq: int, idle_timeout_s: float | None, wait_for_start_s: float | None
    ) -> AsyncIterator[StreamChunk]:
        """As JetStreamFrames.follow; the follow owns the consumer from here."""
        return self._frames.follow(
            self._request_id,
            after_seq=after_seq,
            idle_timeout_s=idle_timeout_s,
            wait_for_start_s=wait_for_start_s,
            subscription=self._subscription,
        )

    async def aclose(self) -> None:
        """Remove the consumer unless a follow of it already did (idempotent)."""
        await self._subscription.aclose()
