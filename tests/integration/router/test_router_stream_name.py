"""A deployment that names its frames stream (RIVERBEAM_STREAM_NAME) says so in the ack."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from riverbeam.stream import StreamConfig
from tests.integration.router.router_kit import Stack, collect, open_stack
from tests.support.nats_server import NatsServer

pytestmark = pytest.mark.nats

STREAM = "RIVERBEAM_FRAMES"


@pytest.fixture
async def named_stack() -> AsyncIterator[Stack]:
    # A NATS of its own: a second stream over riverbeam.stream.> would overlap the default one.
    server = await asyncio.to_thread(NatsServer().start)
    try:
        async with open_stack(server.url, stream_config=StreamConfig(name=STREAM)) as stack:
            yield stack
    finally:
        await asyncio.to_thread(server.stop)


async def test_the_ack_names_the_stream_the_frames_are_in(named_stack: Stack) -> None:
    alice = named_stack.client("alice")
    ack = await alice.invoke("assistant", "hi", stream=True)
    # The relay reads the configured stream, so FollowStream works either way.
    frames = await collect(alice.follow(ack.request_id))
    assert frames[-1].type == "done"
    # A client without the router subscribes to what the ack names.
    assert ack.stream_name == STREAM
