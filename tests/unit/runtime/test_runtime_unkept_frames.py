"""A sink that keeps no frame (a non-streaming request's CountingSink) is given the agent's
frames unstamped (the ids would be read by nobody) and a done frame without the recorded
result; the run's record, its result and the frames of a sink that keeps them are as before."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from riverbeam.runtime import RiverBeam
from riverbeam.runtime._sinks import CountingSink, FrameSink
from riverbeam.stream import StreamConfig
from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamChunk
from tests.unit.runtime.runtime_kit import FramesAgent, text_request


class Seen(CountingSink):
    """A counting sink that remembers what it was given (for the test only)."""

    __slots__ = ("given",)

    def __init__(self) -> None:
        super().__init__()
        self.given: list[StreamChunk] = []

    async def publish(self, chunk: StreamChunk) -> None:
        self.given.append(chunk)
        await super().publish(chunk)


class CountingSinks:
    def __init__(self) -> None:
        self.opened: list[Seen] = []

    @property
    def stream(self) -> StreamConfig:
        return StreamConfig()

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        self.opened.append(Seen())
        return self.opened[-1]


def _chunk(text: str, *, timestamp: datetime | None) -> StreamChunk:
    return StreamChunk(
        type="chunk",
        timestamp=timestamp,
        data=AgentMessage(role="ai", content=[ContentPart.of_text(text)], is_delta=True),
    )


def _frames() -> list[StreamChunk]:
    done = AgentResult(agent_name="frames", content=[ContentPart.of_text("a b")])
    return [
        _chunk("a ", timestamp=datetime.now(UTC)),
        _chunk("b", timestamp=None),
        StreamChunk(type="done", result=done),
    ]


async def test_a_counting_sink_gets_the_agents_frames_and_a_done_frame_without_result() -> None:
    frames = _frames()
    sinks = CountingSinks()
    beam = RiverBeam(sinks=sinks)  # type: ignore[arg-type]
    beam.register_agent(FramesAgent("frames", frames))
    result = await beam.invoke(text_request("frames", "hi"))
    assert isinstance(result, AgentResult) and result.text == "a b"
    (sink,) = sinks.opened
    first, second, done = sink.given
    assert first is frames[0] and first.request_id is None  # as the agent made it
    # Without a timestamp it is stamped as before (the tracker reads the timestamp).
    assert second is not frames[1] and second.timestamp is not None
    assert second.request_id == result.request_id and second.run_id == result.run_id
    assert done.type == "done" and done.request_id == result.request_id
    assert done.result is not None and done.result.latency_ms is None  # not the recorded one
    assert sink.last_seq == 3
    run = await beam.get_run(result.run_id or "")
    assert run.status == "completed" and run.result == result


async def test_a_sink_that_keeps_frames_gets_them_stamped_with_the_recorded_result() -> None:
    beam = RiverBeam()
    beam.register_agent(FramesAgent("frames", _frames()))
    result = await beam.invoke(text_request("frames", "hi"))
    assert isinstance(result, AgentResult)
    kept: Any = beam.sinks.frames(result.request_id or "")  # type: ignore[attr-defined]
    assert [f.type for f in kept] == ["chunk", "chunk", "done"]
    assert all(f.request_id == result.request_id and f.run_id == result.run_id for f in kept)
    assert kept[-1].result == result
