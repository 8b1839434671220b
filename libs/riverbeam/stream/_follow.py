"""Following one request's frames: replay from JetStream, then live, until the terminal frame."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncGenerator

import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import api
from nats.js.client import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._config import StreamConfig
from riverbeam.stream._subjects import request_id_token, subject_for
from riverbeam.types import StreamChunk

__all__ = ["RequestSubscription", "follow", "last_frame", "last_seq", "subscribe_request"]

log = logging.getLogger("riverbeam.stream")

# Cleaning up a follower's consumer is best effort: never hold a cancelled caller longer.
_CLEANUP_TIMEOUT_S = 2.0
# What nats-py gives an ordered consumer: a heartbeat every 5 s, no redelivery.
_IDLE_HEARTBEAT_S = 5.0
_ORDERED_ACK_WAIT_S = 22 * 3600.0


async def last_frame(
    js: JetStreamContext, request_id: str, *, config: StreamConfig | None = None
) -> StreamChunk:
    """The latest frame stored for a request.

    Raises:
        RiverbeamError: STREAM_NOT_FOUND when the stream holds no frame of the request (never
            published, or expired); INVALID_UUID for a bad request id.
    """
    config = config or StreamConfig()
    subject = subject_for(request_id, prefix=config.subject_prefix)
    try:
        raw = await js.get_last_msg(config.name, subject)
    except nats.js.errors.NotFoundError:
        raise RiverbeamError(
            ErrorCode.STREAM_NOT_FOUND,
            f"no frames for request {request_id_token(request_id)}",
            request_id=request_id,
            stream=config.name,
        ) from None
    except (nats.errors.Error, OSError) as exc:
        raise _unavailable(exc, subject) from exc
    frame, _ = _parse_frame(raw.data or b"", subject)
    return frame


async def last_seq(
    js: JetStreamContext, request_id: str, *, config: StreamConfig | None = None
) -> int:
    """The sequence number of a request's latest stored frame (STREAM_NOT_FOUND when none)."""
    frame = await last_frame(js, request_id, config=config)
    return frame.seq or 0


def follow(
    js: JetStreamContext,
    request_id: str,
    *,
    after_seq: int = 0,
    timeout_s: float | None = None,
    wait_for_start_s: float | None = None,
    config: StreamConfig | None = None,
    subscription: RequestSubscription | None = None,
) -> AsyncGenerator[StreamChunk, None]:
    """The frames of a request after `after_seq`: stored ones first, then live ones.

    Ends after the done or error frame (which it yields), so a follower that joins after the
    request finished replays it and ends. Frames are checked by their `seq`: a repeated or
    older frame is dropped, a missing one is an error. Use `contextlib.aclosing` when you may
    stop early, so the JetStream consumer is removed at once rather than when collected.

    Args:
        js: A JetStream context.
        request_id: The request's UUID.
        after_seq: Skip frames up to and including this sequence number (a resume cursor).
        timeout_s: Longest wait for the next frame; None waits as long as it takes.
        wait_for_start_s: Longest wait for the request's first frame; when it passes with no
            frame stored, the request is unknown (STREAM_NOT_FOUND). None uses `timeout_s`.
        config: The frames stream.
        subscription: The request's consumer, made beforehand by `subscribe_request` (so it
            was set up while the caller decided how long to wait); the follow owns it from here
            and removes it when it ends. None: the follow makes its own.

    Raises:
        RiverbeamError: INVALID_UUID / INVALID_ARGUMENT for bad arguments (at call time);
            STREAM_GAP when a frame is missing; STREAM_TIMEOUT when `timeout_s` passes without a
            frame; STREAM_NOT_FOUND when `wait_for_start_s` passes and the request has no frames;
            INVALID_DOCUMENT for a frame that is not StreamChunk JSON; INTERNAL when NATS fails.
    """
    config = config or StreamConfig()
    subject = subject_for(request_id, prefix=config.subject_prefix)
    if after_seq < 0:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "after_seq must be >= 0", field="after_seq"
        )
    for name, value in (("timeout_s", timeout_s), ("wait_for_start_s", wait_for_start_s)):
        if value is not None and value < 0:
            raise RiverbeamError(ErrorCode.INVALID_ARGUMENT, f"{name} must be >= 0", field=name)
    token = request_id_token(request_id)
    if subscription is not None and subscription.subject != subject:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT,
            f"the subscription is on {subscription.subject}, not {subject}",
            field="subscription",
        )
    return _follow(
        js,
        token,
        subject,
        after_seq=after_seq,
        timeout_s=timeout_s,
        wait_for_start_s=wait_for_start_s,
        config=config,
        subscription=subscription,
    )


class RequestSubscription:
    """An ordered consumer on one request's subject, made before anyone reads it.

    Its frames wait in the client's pending queue until `follow` reads them. `follow` removes
    the consumer when it ends; `aclose` (idempotent) removes it when no follow took it over, or
    one was stopped before it began.
    """

    def __init__(
        self,
        js: JetStreamContext,
        sub: JetStreamContext.PushSubscription,
        subject: str,
        stream: str,
    ) -> None:
        self._js = js
        self.sub = sub
        self._stream = stream
        self.subject = subject
        self._closed = False

    async def aclose(self) -> None:
        """Unsubscribe and remove the consumer; again, a no-op."""
        if self._closed:
            return
        self._closed = True
        await _drop_subscription(self._js, self.sub, self._stream)


async def subscribe_request(
    js: JetStreamContext, request_id: str, *, config: StreamConfig | None = None
) -> RequestSubscription:
    """A consumer of the request's frames from its first one, for `follow(subscription=...)`.

    One JetStream API request (the consumer's creation): the stream is named, not looked up.
    The subscription to the consumer's deliver subject is made before the consumer, so the
    server delivers the first frame as soon as the consumer exists (`js.subscribe` creates the
    consumer first and subscribes only after the reply: one more trip before the first frame).
    It is nats-py's ordered consumer (flow control, heartbeats, recreated past a lost message).

    Raises:
        RiverbeamError: INVALID_UUID for a bad request id; STREAM_NOT_FOUND when the stream
            does not exist; STREAM_UNAVAILABLE when NATS fails.
    """
    config = config or StreamConfig()
    subject = subject_for(request_id, prefix=config.subject_prefix)
    try:
        sub = await _ordered_consumer(js, subject, config.name)
    except nats.js.errors.NotFoundError as exc:
        raise RiverbeamError(
            ErrorCode.STREAM_NOT_FOUND,
            f"JetStream stream {config.name} does not exist",
            request_id=request_id_token(request_id),
            stream=config.name,
        ) from exc
    except (nats.errors.Error, OSError) as exc:
        raise _unavailable(exc, subject) from exc
    return RequestSubscription(js, sub, subject, config.name)


async def _ordered_consumer(
    js: JetStreamContext, subject: str, stream: str
) -> JetStreamContext.PushSubscription:
    """An ordered push consumer of `subject` from its first message, subscribed to first.

    Configured as `js.subscribe(ordered_consumer=True)` configures one. The consumer is named
    here, so the subscription knows it before the server answers; the configuration nats-py
    keeps for recreating the consumer has no name (a recreated one gets its own).
    """
    consumer = api.ConsumerConfig(
        deliver_subject=js._nc.new_inbox(),
        filter_subject=subject,
        deliver_policy=api.DeliverPolicy.ALL,
        ack_policy=api.AckPolicy.NONE,
        flow_control=True,
        idle_heartbeat=_IDLE_HEARTBEAT_S,
        max_deliver=1,
        ack_wait=_ORDERED_ACK_WAIT_S,
        num_replicas=1,
        mem_storage=True,
    )
    name = uuid.uuid4().hex
    sub = await js.subscribe_bind(stream, consumer, name, ordered_consumer=True)
    try:
        info = await js.add_consumer(stream, consumer, name=name)
    except BaseException:
        with contextlib.suppress(nats.errors.Error, OSError):
            await sub.unsubscribe()
        raise
    sub._consumer = info.name or name
    return sub


async def _follow(
    js: JetStreamContext,
    request_id: str,
    subject: str,
    *,
    after_seq: int,
    timeout_s: float | None,
    wait_for_start_s: float | None,
    config: StreamConfig,
    subscription: RequestSubscription | None,
) -> AsyncGenerator[StreamChunk, None]:
    if subscription is None:
        subscription = await subscribe_request(js, request_id, config=config)
    sub = subscription.sub

    try:
        expected = after_seq + 1
        started = False
        while True:
            waiting_for_start = not started and wait_for_start_s is not None
            wait = wait_for_start_s if waiting_for_start else timeout_s
            try:
                msg = _delivered_msg(sub)
                if msg is None:
                    msg = await sub.next_msg(timeout=wait)
            except nats.errors.TimeoutError:
                if not waiting_for_start:
                    raise RiverbeamError(
                        ErrorCode.STREAM_TIMEOUT,
                        f"no frame of request {request_id} within {timeout_s}s",
                        request_id=request_id,
                        after_seq=expected - 1,
                    ) from None
                # Nothing delivered yet; ask the stream directly before calling it unknown.
                await last_frame(js, request_id, config=config)
                started = True
                continue
            except nats.errors.Error as exc:
                _reraise_cancellation()
                raise _unavailable(exc, subject) from exc
            started = True
            frame, seq = _parse_frame(msg.data, subject)
            if seq < expected:
                continue  # a duplicate, or before the caller's cursor
            if seq > expected:
                raise RiverbeamError(
                    ErrorCode.STREAM_GAP,
                    f"request {request_id}: expected frame {expected}, got {seq}",
                    request_id=request_id,
                    expected_seq=expected,
                    got_seq=seq,
                )
            expected += 1
            yield frame
            if frame.is_terminal:
                return
    finally:
        await subscription.aclose()


def _delivered_msg(sub: JetStreamContext.PushSubscription) -> Msg | None:
    """The next message the server already delivered, or None when none waits.

    `next_msg` makes two tasks, a timer and a uuid for every message, even one that is already
    in the subscription's queue (every frame of a replay is): ~0.1 ms of the router's loop per
    frame. A waiting message is taken as nats-py's own pull fetch takes it: same queue, same
    pending-bytes accounting, so its slow-consumer limits and ordered-consumer flow control see
    no difference. Control messages (heartbeats, flow control) never enter the queue.
    """
    # nats-py's own attribute: a version without it (none so far) takes the next_msg path.
    queue: asyncio.Queue[Msg] | None = getattr(sub, "_pending_queue", None)
    if queue is None or queue.empty():
        return None
    msg = queue.get_nowait()
    sub._pending_size -= len(msg.data)
    queue.task_done()
    return msg


def _parse_frame(data: bytes, subject: str) -> tuple[StreamChunk, int]:
    try:
        frame = StreamChunk.parse(data)
    except RiverbeamError as exc:
        raise RiverbeamError(
            ErrorCode.INVALID_DOCUMENT,
            f"frame on {subject} is not StreamChunk JSON: {exc.message}",
            subject=subject,
        ) from exc
    if frame.seq is None:
        raise RiverbeamError(
            ErrorCode.INVALID_DOCUMENT, f"frame on {subject} has no seq", subject=subject
        )
    return frame, frame.seq


def _reraise_cancellation() -> None:
    # nats-py turns a cancellation that lands while the connection closes into
    # ConnectionClosedError; give the caller its cancellation back.
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def _drop_subscription(
    js: JetStreamContext, sub: JetStreamContext.PushSubscription, stream: str
) -> None:
    """Unsubscribe and delete the consumer now instead of waiting for the server to reap it."""
    # nats-py keeps the consumer name current across ordered-consumer resets; if a release
    # renames the attribute, the server still reaps the consumer once it sees no interest.
    consumer = getattr(sub, "_consumer", None)
    with contextlib.suppress(nats.errors.Error, OSError):
        await sub.unsubscribe()
    if not isinstance(consumer, str) or not consumer:
        return
    try:
        async with asyncio.timeout(_CLEANUP_TIMEOUT_S):
            await js.delete_consumer(stream, consumer)
    except (nats.errors.Error, OSError, TimeoutError) as exc:
        log.debug("consumer %s of stream %s left to expire: %r", consumer, stream, exc)


def _unavailable(exc: BaseException, subject: str) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.STREAM_UNAVAILABLE,
        f"NATS failed while following {subject}: {exc!r}",
        subject=subject,
    )
