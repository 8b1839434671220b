"""Cancel control over core NATS."""

from __future__ import annotations

import asyncio

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream import NatsConnection, publish_cancel, subscribe_cancel

pytestmark = pytest.mark.nats

GUARD_S = 10


async def test_cancel_round_trip(nats: NatsConnection) -> None:
    received: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    async def handler(request_id: str, reason: str) -> None:
        await received.put((request_id, reason))

    sub = await subscribe_cancel(nats.nc, handler)
    try:
        request_id = new_id()
        await publish_cancel(nats.nc, request_id, "user pressed stop")
        async with asyncio.timeout(GUARD_S):
            assert await received.get() == (request_id, "user pressed stop")
    finally:
        await sub.unsubscribe()


async def test_every_subscriber_hears_a_cancel(nats: NatsConnection) -> None:
    # Broadcast, not a queue group: whichever runner holds the run must hear it.
    heard: list[asyncio.Queue[str]] = [asyncio.Queue(), asyncio.Queue()]
    subs = []
    for queue in heard:

        async def handler(request_id: str, reason: str, q: asyncio.Queue[str] = queue) -> None:
            await q.put(request_id)

        subs.append(await subscribe_cancel(nats.nc, handler))
    try:
        request_id = new_id()
        await publish_cancel(nats.nc, request_id)
        async with asyncio.timeout(GUARD_S):
            assert [await q.get() for q in heard] == [request_id, request_id]
    finally:
        for sub in subs:
            await sub.unsubscribe()


async def test_bad_cancels_are_ignored_and_a_failing_handler_does_not_stop_the_rest(
    nats: NatsConnection,
) -> None:
    received: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    first = new_id()

    async def handler(request_id: str, reason: str) -> None:
        if request_id == first:
            raise RuntimeError("handler bug")
        await received.put((request_id, reason))

    sub = await subscribe_cancel(nats.nc, handler)
    try:
        await nats.nc.publish("riverbeam.control.cancel.not-a-uuid", b'{"reason": "x"}')
        await publish_cancel(nats.nc, first, "raises")
        second = new_id()
        await nats.nc.publish(f"riverbeam.control.cancel.{second}", b"not json")
        async with asyncio.timeout(GUARD_S):
            assert await received.get() == (second, "")
        assert received.empty()
    finally:
        await sub.unsubscribe()


async def test_cancel_of_a_bad_request_id_is_refused(nats: NatsConnection) -> None:
    with pytest.raises(RiverbeamError) as info:
        await publish_cancel(nats.nc, "*")
    assert info.value.code is ErrorCode.INVALID_UUID
