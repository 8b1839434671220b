"""Publishing one request's frames to JetStream, numbered and deduplicated."""

from __future__ import annotations

import asyncio
import logging

import nats.errors
import nats.js.errors
from nats.js.client import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._config import StreamConfig
from riverbeam.stream._ensure import ensure_stream
from riverbeam.stream._sink import SequencedSink
from riverbeam.stream._subjects import msg_id_of_token, subject_for
from riverbeam.types import StreamChunk
from riverbeam.types._convert_json import to_json_text

__all__ = ["EXPECTED_LAST_SUBJECT_SEQ_HEADER", "MSG_ID_HEADER", "RequestPublisher"]

log = logging.getLogger("riverbeam.stream")

MSG_ID_HEADER = "Nats-Msg-Id"
# JetStream optimistic concurrency per subject: stored only if the subject's last message is
# still the one this writer saw. A second writer (the reaper ending the request) fences off
# the first: after its frame, the first writer's next frame is refused.
EXPECTED_LAST_SUBJECT_SEQ_HEADER = "Nats-Expected-Last-Subject-Sequence"
# JetStream error code: "wrong last sequence" (the expected-last header did not match).
_WRONG_LAST_SEQUENCE = 10071
# Frames one request may have numbered but not yet acknowledged before publish() waits.
DEFAULT_MAX_PENDING = 32

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

    Frames are also sent with `Nats-Expected-Last-Subject-Sequence` (the stream sequence of
    this writer's previous frame; 0, an empty subject, for a new request's first frame): once
    another writer published on the request (the reaper's terminal frame), every later frame
    of this one is refused with BEM-115. When the stream was wiped meanwhile (the subject is
    empty again), the writer carries on from there. With `ensure_missing_stream`, a stream
    that vanished (NATS restarted without its data) is created again and the frame retried.

    The chain means one frame on the wire at a time, but the caller need not wait for it: a
    non-terminal frame is queued (see SequencedSink) and its publish() returns at once, so the
    agent goes on while the acks come back. The terminal frame, and a continuing writer's
    first frame, are sent only after every earlier frame's ack, and their publish() returns
    with their own ack. A fenced frame's BEM-115 is raised by the next publish().

    Args:
        js: A JetStream context.
        request_id: The request's UUID.
        config: The stream the frames go to; `ensure_stream` must have created it.
        attempts: Publish attempts per frame before giving up (at least 1).
        publish_timeout_s: How long one attempt waits for the server's acknowledgement.
        backoff_s: Pause before the second attempt; doubled for each further one.
        start_after_seq: Number the first frame start_after_seq + 1 (continue a request).
            Such a writer does not know the subject's last stream sequence: its first frame
            is deduplicated by number only.
        ensure_missing_stream: Create the stream again when a publish finds it missing.
        max_pending: Frames queued for delivery before publish() waits (0: every publish
            awaits its acknowledgement).
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
        ensure_missing_stream: bool = False,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        super().__init__(request_id, start_after_seq=start_after_seq, max_pending=max_pending)
        self._expected_last: int | None = 0 if start_after_seq == 0 else None
        # The frame whose publish was sent but never acknowledged (e.g. cancelled meanwhile):
        # if it landed, it is this writer's own and not another writer's.
        self._unconfirmed: tuple[str, bytes] | None = None
        self._ensure_missing = ensure_missing_stream
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

    def _confirms(self, chunk: StreamChunk) -> bool:
        # A writer continuing a request has no fence until its first frame is acknowledged,
        # and its caller renumbers that frame when it was a duplicate (BEM-031).
        return chunk.is_terminal or self._expected_last is None

    async def _deliver(self, frame: StreamChunk) -> None:
        assert frame.seq is not None
        # The sink made its request id canonical already: not checked again per frame.
        msg_id = msg_id_of_token(self.request_id, frame.seq)
        # frame.to_json(), the same text without pydantic's serializer pass (types/_convert_json).
        payload = to_json_text(frame).encode()
        last_error: Exception | None = None
        tried = 0
        previous, self._unconfirmed = self._unconfirmed, (msg_id, payload)
        for attempt in range(1, self._attempts + 1):
            tried = attempt
            if attempt > 1:
                await asyncio.sleep(self._backoff_s * 2 ** (attempt - 2))
            # A fresh dict each attempt: publish() adds the expected-stream header to it.
            headers = {MSG_ID_HEADER: msg_id}
            if self._expected_last is not None:
                headers[EXPECTED_LAST_SUBJECT_SEQ_HEADER] = str(self._expected_last)
            try:
                ack = await self._js.publish(
                    self._subject,
                    payload,
                    timeout=self._timeout_s,
                    stream=self._config.name,
                    headers=headers,
                )
            except (nats.errors.Error, OSError) as exc:
                last_error = exc
                if _is_wrong_last_sequence(exc):
                    if await self._own_or_wiped(previous):
                        previous = None
                        continue
                    raise RiverbeamError(
                        ErrorCode.STREAM_FENCED,
                        f"frame {msg_id} refused: another writer published on the request",
                        request_id=self.request_id,
                        seq=frame.seq,
                    ) from None
                if isinstance(exc, nats.js.errors.NoStreamResponseError) and self._ensure_missing:
                    await self._ensure_stream(msg_id)
                    continue
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
            self._expected_last = ack.seq
            self._unconfirmed = None
            return
        raise RiverbeamError(
            ErrorCode.STREAM_PUBLISH_FAILED,
            f"frame {msg_id} not published after {tried} attempt(s): {last_error!r}",
            request_id=self.request_id,
            seq=frame.seq,
            subject=self._subject,
        ) from last_error

    async def _own_or_wiped(self, previous: tuple[str, bytes] | None) -> bool:
        """After an expected-last mismatch: True (and the expectation fixed) when the subject's
        last message is this writer's own unacknowledged frame, or the subject is empty
        although this writer published on it (the stream was wiped); False when another
        writer published there."""
        try:
            last = await self._js.get_last_msg(self._config.name, self._subject)
        except nats.js.errors.NotFoundError:
            if not self._expected_last:
                return False
            log.warning("stream %s lost the frames of %s", self._config.name, self.request_id)
            self._expected_last = 0
            return True
        except (nats.errors.Error, OSError):
            return False
        headers = last.headers or {}
        if previous is not None and (headers.get(MSG_ID_HEADER), last.data) == previous:
            self._expected_last = last.seq
            return True
        return False

    async def _ensure_stream(self, msg_id: str) -> None:
        log.warning("stream %s is missing (publishing %s); creating it", self._config.name, msg_id)
        try:
            await ensure_stream(self._js, self._config)
        except RiverbeamError as err:
            log.warning("stream %s not created: %s", self._config.name, err)


def _is_wrong_last_sequence(exc: Exception) -> bool:
    return isinstance(exc, nats.js.errors.APIError) and exc.err_code == _WRONG_LAST_SEQUENCE
