"""Cancel control: `riverbeam.control.cancel.<request_id>` on core NATS (not JetStream).

A cancel is broadcast: every runner subscribes (no queue group) and the one that holds the run
acts on it; the others ignore it. Nothing is stored, so a cancel sent while no runner holds
the request is lost, which is what cancelling a finished or unknown request should do.

Payload: `{"request_id": "<uuid>", "reason": "<text>"}`; the subject is authoritative for
the request id, and an empty or non-JSON payload means "no reason".
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._config import CANCEL_SUBJECT_PREFIX
from riverbeam.stream._subjects import cancel_subject_for, request_id_token

__all__ = ["CancelHandler", "publish_cancel", "subscribe_cancel"]

log = logging.getLogger("riverbeam.stream")

CancelHandler = Callable[[str, str], Awaitable[None]]
"""`await handler(request_id, reason)` for each cancel received."""


def _reason_of(data: bytes) -> str:
    if not data:
        return ""
    try:
        body = json.loads(data)
    except ValueError:
        return ""
    reason = body.get("reason") if isinstance(body, dict) else None
    return reason if isinstance(reason, str) else ""


async def subscribe_cancel(nc: NATS, handler: CancelHandler) -> Subscription:
    """Call `handler(request_id, reason)` for every cancel; returns the subscription to unsubscribe.

    Handlers run one at a time in the subscription's task, so keep them short (cancel a task,
    set an event). A handler that raises is logged and the subscription goes on.
    """

    async def on_message(msg: Msg) -> None:
        token = msg.subject.rsplit(".", 1)[-1]
        try:
            request_id = request_id_token(token)
        except RiverbeamError:
            log.warning("ignoring cancel on %r: not a request id", msg.subject)
            return
        try:
            await handler(request_id, _reason_of(msg.data))
        except Exception:
            log.exception("cancel handler failed for request %s", request_id)

    try:
        return await nc.subscribe(f"{CANCEL_SUBJECT_PREFIX}.*", cb=on_message)
    except nats.errors.Error as exc:
        raise RiverbeamError(
            ErrorCode.STREAM_UNAVAILABLE, f"cannot subscribe to cancel control: {exc!r}"
        ) from exc


async def publish_cancel(
    nc: NATS, request_id: str, reason: str = "", *, flush_timeout_s: float = 5.0
) -> None:
    """Ask whichever runner holds `request_id` to cancel it; returns once NATS has the message.

    Raises:
        RiverbeamError: INVALID_UUID for a bad request id; INTERNAL when NATS fails.
    """
    subject = cancel_subject_for(request_id)
    payload = json.dumps({"request_id": request_id_token(request_id), "reason": reason}).encode()
    try:
        await nc.publish(subject, payload)
        async with asyncio.timeout(flush_timeout_s):
            await nc.flush()
    except (nats.errors.Error, OSError, TimeoutError) as exc:
        raise RiverbeamError(
            ErrorCode.STREAM_UNAVAILABLE,
            f"cannot publish cancel of {request_id}: {exc!r}",
            request_id=request_id,
        ) from exc
