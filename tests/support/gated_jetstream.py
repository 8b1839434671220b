"""A JetStream stand-in whose publishes wait until the test acknowledges or refuses them.

It keeps what a RequestPublisher sends, in wire order, so a test can count what is on the wire
and when, without timing anything: each publish stays in flight until `ack()` or `refuse()`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import nats.js.errors
from nats.js.api import PubAck, RawStreamMsg

from riverbeam.stream import EXPECTED_LAST_SUBJECT_SEQ_HEADER, MSG_ID_HEADER

# JetStream's "wrong last sequence" refusal (another writer published on the subject).
WRONG_LAST_SEQUENCE = nats.js.errors.APIError(
    code=400, err_code=10071, description="wrong last sequence"
)


@dataclass
class Sent:
    msg_id: str
    expected_last: str | None
    payload: bytes


class GatedJetStream:
    """Holds each publish until `ack()` (stored, next stream sequence) or `refuse(exc)`."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self.stored: list[Sent] = []
        self._in_flight: list[asyncio.Future[Exception | None]] = []
        self._changed = asyncio.Condition()

    @property
    def in_flight(self) -> int:
        """Publishes sent and not yet answered."""
        return len(self._in_flight)

    async def publish(self, subject: str, payload: bytes, **kwargs: Any) -> PubAck:
        headers = kwargs["headers"]
        sent = Sent(headers[MSG_ID_HEADER], headers.get(EXPECTED_LAST_SUBJECT_SEQ_HEADER), payload)
        answer: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()
        async with self._changed:
            self.sent.append(sent)
            self._in_flight.append(answer)
            self._changed.notify_all()
        refusal = await answer
        if refusal is not None:
            raise refusal
        self.stored.append(sent)
        return PubAck(stream=kwargs.get("stream") or "", seq=len(self.stored))

    async def wait_sent(self, count: int) -> None:
        """Wait until `count` publishes reached the wire."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.sent) >= count)

    def ack(self) -> None:
        """Store the oldest publish in flight and acknowledge it."""
        self._in_flight.pop(0).set_result(None)

    def refuse(self, exc: Exception) -> None:
        """Answer the oldest publish in flight with `exc`."""
        self._in_flight.pop(0).set_result(exc)

    async def get_last_msg(self, stream_name: str, subject: str) -> RawStreamMsg:
        """The subject's last message: another writer's (so a wrong-last refusal is a fence)."""
        return RawStreamMsg(
            subject=subject,
            seq=len(self.stored) + 1,
            data=b"another writer",
            headers={MSG_ID_HEADER: "another-writer"},
        )


async def let_run(rounds: int = 20) -> None:
    """Give every ready task a chance to run (a count of loop turns, not a time)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
