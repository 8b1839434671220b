"""RiverbeamClient.invoke_stream: the ack, then the frames; an older router gets two calls."""

from __future__ import annotations

from typing import Any

import pytest

from riverbeam.client import RiverbeamClient
from riverbeam.core.errors import RiverbeamError
from riverbeam.types import StreamAck, StreamChunk
from tests.unit.client.fake_router import FakeRiverbeam


async def events_of(client: RiverbeamClient, *args: Any, **kwargs: Any) -> list[Any]:
    return [event async for event in client.invoke_stream(*args, **kwargs)]


def names(fake: FakeRiverbeam) -> list[str]:
    return [name for name, _ in fake.calls]


async def test_the_ack_then_every_frame_on_one_call(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    ack, *frames = await events_of(client, "assistant", "hello", metadata={"k": "v"})
    assert isinstance(ack, StreamAck)
    assert all(isinstance(f, StreamChunk) for f in frames)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert frames[-1].type == "done"
    assert names(fake) == ["InvokeStream"]
    sent = fake.invokes[-1]
    assert sent.stream is True and sent.metadata == {"k": "v"}


async def test_duplicates_are_dropped(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    fake.repeat_frames = True
    _, *frames = await events_of(client, "assistant", "hello")
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))


async def test_a_router_without_invoke_stream_gets_invoke_then_follow(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    fake.older = True
    ack, *frames = await events_of(client, "assistant", "hello")
    assert isinstance(ack, StreamAck) and frames[-1].type == "done"
    assert names(fake) == ["InvokeStream", "Invoke", "FollowStream"]
    fake.calls.clear()
    fake.older = False
    _, *same = await events_of(client, "assistant", "hello")
    assert [f.type for f in same] == [f.type for f in frames]
    assert names(fake) == ["InvokeStream"]


async def test_a_refused_invoke_is_the_routers_error(client: RiverbeamClient) -> None:
    with pytest.raises(RiverbeamError) as refused:
        await events_of(client, "missing", "hello")
    assert refused.value.bem == "BEM-020"
