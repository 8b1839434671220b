"""Following a request's frames: through the router's FollowStream, and the sequence checks."""

from __future__ import annotations

import contextlib

import pytest

from riverbeam.client import RiverbeamClient, SequenceGuard
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import StreamChunk
from tests.unit.client.fake_router import FakeRiverbeam


async def _collect(
    client: RiverbeamClient, request_id: str, after_seq: int = 0
) -> list[StreamChunk]:
    return [f async for f in client.follow(request_id, after_seq=after_seq)]


async def test_follow_yields_every_frame_then_stops_at_done(client: RiverbeamClient) -> None:
    ack = await client.invoke("assistant", "hello", stream=True)
    frames = await _collect(client, ack.request_id)
    assert [f.type for f in frames] == [
        "placeholder", "thinking", "tool", "tool", "chunk", "chunk", "done",
    ]  # fmt: skip
    assert [f.seq for f in frames] == list(range(1, 8))
    assert frames[-1].result is not None and frames[-1].result.text == "Hello world"


async def test_follow_after_a_cursor(client: RiverbeamClient) -> None:
    ack = await client.invoke("assistant", "hello", stream=True)
    frames = await _collect(client, ack.request_id, after_seq=5)
    assert [f.seq for f in frames] == [6, 7]


async def test_follow_ends_with_the_error_frame(client: RiverbeamClient) -> None:
    ack = await client.invoke("broken", "hello", stream=True)
    frames = await _collect(client, ack.request_id)
    assert frames[-1].type == "error"
    assert frames[-1].error_code == "BEM-087"


async def test_follow_drops_duplicates(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    fake.repeat_frames = True
    ack = await client.invoke("assistant", "hello", stream=True)
    frames = await _collect(client, ack.request_id)
    assert [f.seq for f in frames] == list(range(1, 8))


async def test_follow_detects_a_gap(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    fake.gap_at = 3
    ack = await client.invoke("assistant", "hello", stream=True)
    got: list[int] = []
    with pytest.raises(RiverbeamError) as info:
        async for frame in client.follow(ack.request_id):
            got.append(frame.seq or 0)
    assert got == [1, 2]
    assert info.value.code is ErrorCode.STREAM_GAP
    assert info.value.details["expected_seq"] == "3"


async def test_follow_unknown_request_is_the_servers_error(client: RiverbeamClient) -> None:
    with pytest.raises(RiverbeamError) as info:
        await _collect(client, "16d12ddc-651a-431d-997c-a756d5793ebf")
    assert info.value.code is ErrorCode.STREAM_NOT_FOUND


async def test_follow_can_stop_early(client: RiverbeamClient) -> None:
    ack = await client.invoke("assistant", "hello", stream=True)
    frames = client.follow(ack.request_id)
    async with contextlib.aclosing(frames):
        first = await anext(frames)
    assert first.seq == 1
    # the client is still usable after abandoning a stream
    assert (await client.list_models())[0].name == "echo-1"


async def test_negative_cursor_is_refused(client: RiverbeamClient) -> None:
    with pytest.raises(RiverbeamError) as info:
        await _collect(client, "16d12ddc-651a-431d-997c-a756d5793ebf", after_seq=-1)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT


def _frame(seq: int | None) -> StreamChunk:
    return StreamChunk.parse({"type": "chunk", "seq": seq} if seq else {"type": "chunk"})


def test_sequence_guard() -> None:
    guard = SequenceGuard("r", after_seq=2)
    assert guard.accept(_frame(1)) is False
    assert guard.accept(_frame(3)) is True
    assert guard.accept(_frame(3)) is False
    assert guard.accept(_frame(None)) is True
    assert guard.last_seq == 3
    with pytest.raises(RiverbeamError) as info:
        guard.accept(_frame(5))
    assert info.value.code is ErrorCode.STREAM_GAP
    assert info.value.details == {"request_id": "r", "expected_seq": "4", "got_seq": "5"}
