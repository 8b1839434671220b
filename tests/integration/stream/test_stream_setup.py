"""ensure_stream and NatsConnection against a real nats-server."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream import (
    NatsConnection,
    RequestPublisher,
    StreamConfig,
    ensure_stream,
    follow,
)
from tests.integration.stream.frames import done_frame

pytestmark = pytest.mark.nats


@pytest.fixture
async def private_config(nats: NatsConnection) -> AsyncIterator[StreamConfig]:
    """A stream of this test's own (name and subjects), deleted afterwards."""
    tag = uuid.uuid4().hex[:12]
    config = StreamConfig(name=f"RB_TEST_{tag}", subject_prefix=f"rbtest.{tag}", max_age_s=3600)
    yield config
    try:
        await nats.js.delete_stream(config.name)
    except Exception:
        pass


async def test_ensure_stream_creates_the_stream(
    nats: NatsConnection, private_config: StreamConfig
) -> None:
    await ensure_stream(nats.js, private_config)

    info = await nats.js.stream_info(private_config.name)
    assert info.config.subjects == [f"{private_config.subject_prefix}.>"]
    assert info.config.max_age == pytest.approx(3600)
    assert info.config.duplicate_window == pytest.approx(120)


async def test_ensure_stream_is_idempotent_and_safe_concurrently(
    nats: NatsConnection, nats_url: str, private_config: StreamConfig
) -> None:
    # Several "replicas", each with its own connection, at once; then again.
    conns = [NatsConnection(nats_url) for _ in range(4)]
    for conn in conns:
        await conn.connect()
    try:
        await asyncio.gather(*(ensure_stream(c.js, private_config) for c in conns))
        await asyncio.gather(*(ensure_stream(c.js, private_config) for c in conns))
    finally:
        for conn in conns:
            await conn.close()

    names = await nats.js.streams_info()
    assert [s.config.name for s in names].count(private_config.name) == 1

    # The stream works for frames.
    request_id = new_id()
    await RequestPublisher(nats.js, request_id, config=private_config).publish(done_frame())
    async with asyncio.timeout(10):
        frames = [f async for f in follow(nats.js, request_id, config=private_config)]
    assert [f.seq for f in frames] == [1]


async def test_ensure_stream_updates_retention_that_differs(
    nats: NatsConnection, private_config: StreamConfig
) -> None:
    await ensure_stream(nats.js, private_config)
    request_id = new_id()
    await RequestPublisher(nats.js, request_id, config=private_config).publish(done_frame())

    changed = StreamConfig(
        name=private_config.name,
        subject_prefix=private_config.subject_prefix,
        max_age_s=7200,
        duplicate_window_s=60,
        max_bytes=10_000_000,
    )
    await asyncio.gather(ensure_stream(nats.js, changed), ensure_stream(nats.js, changed))

    info = await nats.js.stream_info(private_config.name)
    assert info.config.max_age == pytest.approx(7200)
    assert info.config.duplicate_window == pytest.approx(60)
    assert info.config.max_bytes == 10_000_000
    assert info.state.messages == 1  # frames survive the update


async def test_ensure_stream_reports_overlapping_subjects(
    nats: NatsConnection, private_config: StreamConfig
) -> None:
    await ensure_stream(nats.js, private_config)
    clash = StreamConfig(
        name=f"{private_config.name}_B", subject_prefix=private_config.subject_prefix
    )

    with pytest.raises(RiverbeamError) as info:
        await ensure_stream(nats.js, clash)
    assert info.value.code is ErrorCode.STREAM_PUBLISH_FAILED


async def test_connection_close_is_idempotent(nats_url: str) -> None:
    conn = NatsConnection(nats_url)
    async with conn:
        assert conn.is_connected
        await conn.nc.flush()
    await conn.close()
    assert not conn.is_connected
    with pytest.raises(RuntimeError):
        _ = conn.js


async def test_connection_to_nothing_fails_clearly() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        conn = NatsConnection(
            f"nats://127.0.0.1:{port}", initial_connect_timeout_s=0.5, reconnect_time_wait_s=0.05
        )
        with pytest.raises(RiverbeamError) as info:
            await conn.connect()
    assert info.value.code is ErrorCode.STREAM_UNAVAILABLE
    await conn.close()
