"""MemorySink and the sequence logic it shares with RequestPublisher."""

from __future__ import annotations

import asyncio

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.stream import FrameSink, MemorySink, RequestPublisher, SequencedSink
from riverbeam.types import StreamChunk
from tests.support.frames import chunk, done, error

GUARD_S = 5  # a hang guard, not a timing assertion


def test_sinks_implement_the_protocol() -> None:
    assert isinstance(MemorySink(), FrameSink)
    assert issubclass(RequestPublisher, SequencedSink)
    assert issubclass(MemorySink, SequencedSink)


async def test_frames_are_numbered_and_tagged_on_a_copy() -> None:
    request_id = new_id()
    sink = MemorySink(request_id)
    original = chunk("a").model_copy(update={"seq": 99, "request_id": new_id()})

    await sink.publish(original)
    await sink.publish(chunk("b"))
    await sink.publish(done())

    assert [(f.seq, f.type) for f in sink.frames] == [(1, "chunk"), (2, "chunk"), (3, "done")]
    assert {f.request_id for f in sink.frames} == {request_id}
    assert original.seq == 99  # the caller's chunk is untouched
    assert sink.last_seq == 3
    assert sink.finished and sink.terminal_frame == sink.frames[-1]


async def test_json_of_a_numbered_frame_omits_empty_fields() -> None:
    request_id = new_id()
    sink = MemorySink(request_id)
    await sink.publish(done())

    assert sink.frames[0].to_json_dict() == {
        "type": "done",
        "result": {"content": [], "agent_name": "echo", "interrupted": False},
        "seq": 1,
        "request_id": request_id,
    }


@pytest.mark.parametrize("terminal", [done, error])
async def test_nothing_after_the_terminal_frame(terminal: object) -> None:
    sink = MemorySink()
    await sink.publish(chunk("a"))
    await sink.publish(terminal())  # type: ignore[operator]

    for late in (chunk("late"), done(), error()):
        with pytest.raises(RiverbeamError) as info:
            await sink.publish(late)
        assert info.value.code is ErrorCode.INTERNAL
    assert len(sink.frames) == 2
    assert sink.frames[-1].is_terminal


async def test_wait_for_and_wait_terminal() -> None:
    sink = MemorySink()

    async def produce() -> None:
        for i in range(3):
            await sink.publish(chunk(str(i)))
            await asyncio.sleep(0)
        await sink.publish(done())

    async with asyncio.timeout(GUARD_S):
        producer = asyncio.create_task(produce())
        first_two = await sink.wait_for(2)
        last = await sink.wait_terminal()
        await producer

    assert len(first_two) >= 2
    assert (last.seq, last.type) == (4, "done")


async def test_follow_replays_then_follows_live() -> None:
    sink = MemorySink()
    await sink.publish(chunk("a"))
    await sink.publish(chunk("b"))
    seen: list[int | None] = []

    async def follower() -> None:
        async for frame in sink.follow(after_seq=1):
            seen.append(frame.seq)

    async with asyncio.timeout(GUARD_S):
        task = asyncio.create_task(follower())
        await sink.publish(chunk("c"))
        await sink.publish(done())
        await task

    assert seen == [2, 3, 4]
    with pytest.raises(RiverbeamError):
        await anext(sink.follow(after_seq=-1))


async def test_concurrent_publishes_get_distinct_ordered_numbers() -> None:
    sink = MemorySink()

    await asyncio.gather(*(sink.publish(chunk(str(i))) for i in range(50)))

    assert [f.seq for f in sink.frames] == list(range(1, 51))


class FlakySink(SequencedSink):
    """Fails the deliveries whose seq is listed."""

    def __init__(self, request_id: str, fail: set[int]) -> None:
        super().__init__(request_id)
        self.fail = fail
        self.delivered: list[StreamChunk] = []

    async def _deliver(self, frame: StreamChunk) -> None:
        assert frame.seq is not None
        if frame.seq in self.fail:
            raise RiverbeamError(ErrorCode.STREAM_PUBLISH_FAILED)
        self.delivered.append(frame)


async def test_a_failed_frame_keeps_its_number_and_a_failed_terminal_does_not_end() -> None:
    sink = FlakySink(new_id(), fail={2, 3})
    await sink.publish(chunk("a"))
    with pytest.raises(RiverbeamError):
        await sink.publish(chunk("b"))
    with pytest.raises(RiverbeamError):
        await sink.publish(done())
    assert not sink.finished

    await sink.publish(error())

    assert [(f.seq, f.type) for f in sink.delivered] == [(1, "chunk"), (4, "error")]
    assert sink.finished


def test_a_sink_needs_a_uuid() -> None:
    with pytest.raises(RiverbeamError) as info:
        MemorySink("x.>")
    assert info.value.code is ErrorCode.INVALID_UUID
