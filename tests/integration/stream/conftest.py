"""Fixtures for the stream tests against a real nats-server.

The session `nats_url` fixture lives in tests/conftest.py (it wraps
tests.support.nats_server.nats_url_fixture); these build on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from riverbeam.stream import NatsConnection, StreamConfig, ensure_stream


@pytest.fixture
def stream_config() -> StreamConfig:
    """The default stream: tests use fresh request ids, so they never see each other's frames."""
    return StreamConfig()


@pytest.fixture
async def nats(nats_url: str, stream_config: StreamConfig) -> AsyncIterator[NatsConnection]:
    """A connection with the frames stream in place."""
    async with NatsConnection(
        nats_url, name="riverbeam-tests", initial_connect_timeout_s=10
    ) as conn:
        await ensure_stream(conn.js, stream_config)
        yield conn
