"""The runner's frame sinks over NATS JetStream (the router's follower is _jetstream_frames.py)."""

from __future__ import annotations

from nats.js import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime._sinks import CountingSink, FrameSink
from riverbeam.stream import RequestPublisher, StreamConfig, last_seq
from riverbeam.telemetry._metrics import FRAMES_PUBLISHED, child_of
from riverbeam.types import StreamChunk

__all__ = ["JetStreamSinks"]


class _CountingPublisher(RequestPublisher):
    async def _deliver(self, frame: StreamChunk) -> None:
        await super()._deliver(frame)
        child_of(FRAMES_PUBLISHED, frame.type).inc()


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
