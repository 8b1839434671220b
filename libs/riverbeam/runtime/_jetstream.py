"""Sinks and followers over NATS JetStream, for the runner and router services."""

from __future__ import annotations

from collections.abc import AsyncIterator

from nats.js import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._sinks import CountingSink, FrameSink
from riverbeam.stream import (
    RequestPublisher,
    RequestSubscription,
    StreamConfig,
    follow,
    last_frame,
    last_seq,
    subscribe_request,
)
from riverbeam.telemetry._metrics import FRAMES_PUBLISHED
from riverbeam.types import StreamChunk

__all__ = ["JetStreamFrames", "JetStreamSinks"]


class _CountingPublisher(RequestPublisher):
    async def _deliver(self, frame: StreamChunk) -> None:
        await super()._deliver(frame)
        FRAMES_PUBLISHED.labels(frame.type).inc()


class JetStreamSinks:
    """Streaming requests publish to riverbeam.stream.<request_id>; others' frames are only
    counted (CountingSink)."""

    def __init__(self, js: JetStreamContext, config: StreamConfig) -> None:
        self._js = js
        self._config = config

    @property
    def stream(self) -> StreamConfig:
        return self._config

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        if not stream:
            return CountingSink()
        return _CountingPublisher(
            self._js, request_id, config=self._config, ensure_missing_stream=True
        )

    async def continue_stream(self, request_id: str, *, stream: bool) -> tuple[FrameSink, int]:
        """Continue a request another runner began, after the last frame on its subject.

        The first frame is deduplicated by number only (this writer does not know the subject
        sequence of the last one); a stalled old writer's frames after that are refused by
        their subject-sequence fence (BEM-115).
        """
        if not stream:
            return CountingSink(), 0
        try:
            after = await last_seq(self._js, request_id, config=self._config)
        except RiverbeamError as err:
            if err.code is not ErrorCode.STREAM_NOT_FOUND:
                raise
            after = 0
        publisher = _CountingPublisher(
            self._js,
            request_id,
            config=self._config,
            start_after_seq=after,
            ensure_missing_stream=True,
        )
        return publisher, after

    async def publish_terminal_error(self, request_id: str, error: RiverbeamError) -> None:
        """End a request whose runner is gone with an error frame after its stored frames.

        A runner that is stalled rather than dead may publish a frame under the same number
        meanwhile; JetStream then drops ours as a duplicate (BEM-031), so number it again.
        """
        for attempt in range(5):
            try:
                after = await last_seq(self._js, request_id, config=self._config)
            except RiverbeamError as err:
                if err.code is not ErrorCode.STREAM_NOT_FOUND:
                    raise
                after = 0
            publisher = _CountingPublisher(
                self._js,
                request_id,
                config=self._config,
                start_after_seq=after,
                ensure_missing_stream=True,
            )
            try:
                await publisher.publish(
                    StreamChunk(type="error", error=error.message, error_code=error.bem)
                )
                return
            except RiverbeamError as err:
                if err.code is not ErrorCode.REQUEST_ID_REUSED or attempt == 4:
                    raise


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
