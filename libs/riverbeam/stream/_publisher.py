"""Publishing one request's frames to JetStream, numbered and deduplicated."""

from __future__ import annotations

import asyncio
import logging

import nats.errors
import nats.js.errors
from nats.js.client import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._config import StreamConfig
from riverbeam.stream._sink import SequencedSink
from riverbeam.stream._subjects import msg_id_for, subject_for
from riverbeam.types import StreamChunk

__all__ = ["MSG_ID_HEADER", "RequestPublisher"]

log = logging.getLogger("riverbeam.stream")

MSG_ID_HEADER = "Nats-Msg-Id"

# Failures that cannot get better by publishing the same bytes again.
_PERMANENT: tuple[type[Exception], ...] = (
    nats.errors.ConnectionClosedError,
    nats.errors.MaxPayloadError,
    nats.errors.BadSubjectError,
    nats.errors.BadHeaderError,
)


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, _PERMANENT):
        return False
    if isinstance(exc, nats.js.errors.APIError):
        # 4xx: the server refused this message (wrong stream, too large...); 5xx: try again.
        return exc.code is None or exc.code >= 500
    return True


class RequestPublisher(SequencedSink):
    """Publishes one request's frames to `riverbeam.stream.<request_id>` on JetStream.

    Each frame is the StreamChunk JSON with `seq` and `request_id` set, sent with header
    `Nats-Msg-Id: <request_id>:<seq>`; a publish that fails is retried with the same id, so a
    retry of a frame the server already stored is dropped by the stream's duplicate window.

    Args:
        js: A JetStream context.
        request_id: The request's UUID.
        config: The stream the frames go to; `ensure_stream` must have created it.
        attempts: Publish attempts per frame before giving up (at least 1).
        publish_timeout_s: How long one attempt waits for the server's acknowledgement.
        backoff_s: Pause before the second attempt; doubled for each further one.
        start_after_seq: Number the first frame start_after_seq + 1 (continue a request).
    """

    def __init__(
        self,
        js: JetStreamContext,
        request_id: str,
        *,
        config: StreamConfig | None = None,
        attempts: int = 4,
        publish_timeout_s: float = 5.0,
        backoff_s: float = 0.1,
        start_after_seq: int = 0,
    ) -> None:
        super().__init__(request_id, start_after_seq=start_after_seq)
        if attempts < 1:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "attempts must be >= 1", field="attempts"
            )
        self._js = js
        self._config = config or StreamConfig()
        self._subject = subject_for(self.request_id, prefix=self._config.subject_prefix)
        self._attempts = attempts
        self._timeout_s = publish_timeout_s
        self._backoff_s = backoff_s

    @property
    def subject(self) -> str:
        return self._subject

    async def _deliver(self, frame: StreamChunk) -> None:
        assert frame.seq is not None
        msg_id = msg_id_for(self.request_id, frame.seq)
        payload = frame.to_json().encode()
        last_error: Exception | None = None
        tried = 0
        for attempt in range(1, self._attempts + 1):
            tried = attempt
            if attempt > 1:
                await asyncio.sleep(self._backoff_s * 2 ** (attempt - 2))
            try:
                ack = await self._js.publish(
                    self._subject,
                    payload,
                    timeout=self._timeout_s,
                    stream=self._config.name,
                    # A fresh dict each attempt: publish() adds the expected-stream header to it.
                    headers={MSG_ID_HEADER: msg_id},
                )
            except (nats.errors.Error, OSError) as exc:
                last_error = exc
                if not _is_transient(exc):
                    break
                log.warning(
                    "publish of %s attempt %d/%d failed: %r", msg_id, attempt, self._attempts, exc
                )
                continue
            if ack.duplicate and attempt == 1:
                # Nobody published this id before us unless another writer uses this request id.
                raise RiverbeamError(
                    ErrorCode.REQUEST_ID_REUSED,
                    f"frame {msg_id} was already published by another writer",
                    request_id=self.request_id,
                    seq=frame.seq,
                )
            return
        raise RiverbeamError(
            ErrorCode.STREAM_PUBLISH_FAILED,
            f"frame {msg_id} not published after {tried} attempt(s): {last_error!r}",
            request_id=self.request_id,
            seq=frame.seq,
            subject=self._subject,
        ) from last_error
