"""A run that ends without its terminal frame closes its sink: no frame delivery is left running."""

from __future__ import annotations

import asyncio
from typing import Any

from runtime_kit import FramesAgent, text_request

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import FrameSink, RiverBeam
from riverbeam.store import InMemoryStore
from riverbeam.stream import RequestPublisher, StreamConfig
from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamAck, StreamChunk
from tests.support.gated_jetstream import GatedJetStream

GUARD_S = 5  # a hang guard, not a timing assertion


class TakenOver(InMemoryStore):
    """Another runner took the run over: this one's finish step is refused (no terminal frame)."""

    async def finish_run(self, **kwargs: Any) -> Any:
        raise RiverbeamError(ErrorCode.STORE_CONFLICT, "the run has another holder")


class GatedSinks:
    """Every streaming request publishes to one JetStream that never acknowledges."""

    def __init__(self) -> None:
        self.js = GatedJetStream()
        self.opened: list[RequestPublisher] = []

    @property
    def stream(self) -> StreamConfig:
        return StreamConfig()

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        sink = RequestPublisher(self.js, request_id)  # type: ignore[arg-type]
        self.opened.append(sink)
        return sink

    async def continue_stream(self, request_id: str, *, stream: bool) -> tuple[FrameSink, int]:
        raise AssertionError("not continued in this test")

    async def publish_terminal_error(self, request_id: str, error: RiverbeamError) -> None:
        raise AssertionError("not reaped in this test")


def _chunk(text: str) -> StreamChunk:
    return StreamChunk(
        type="chunk", data=AgentMessage(role="ai", content=[ContentPart.of_text(text)])
    )


async def test_a_run_lost_before_its_terminal_frame_leaves_no_delivery_task() -> None:
    sinks = GatedSinks()
    beam = RiverBeam(store=TakenOver(), sinks=sinks)
    done = StreamChunk(type="done", result=AgentResult(agent_name="lost"))
    beam.register_agent(FramesAgent("lost", [_chunk("a"), _chunk("b"), done]))

    async with asyncio.timeout(GUARD_S):
        ack = await beam.invoke(text_request("lost", "hi", stream=True))
        assert isinstance(ack, StreamAck)
        # The agent went on while frame 1's ack never came; the finish step was refused.
        await beam.wait_idle()

    [sink] = sinks.opened
    assert [t for t in asyncio.all_tasks() if t.get_name().startswith("frames ")] == []
    assert (sink.last_seq, sink.pending, len(sinks.js.sent)) == (2, 0, 1)
    assert not sink.finished
