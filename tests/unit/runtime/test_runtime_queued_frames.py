"""The pipeline and a sink that queues frames: the finish step waits until the frames before the
terminal one are stored, a frame that was not fails the run as before, and a run that ends
without its terminal frame closes its sink, so no frame delivery is left running."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats.errors
from runtime_kit import FramesAgent, text_request

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import FrameSink, RiverBeam
from riverbeam.runtime._sinks import CountingSink
from riverbeam.store import InMemoryStore
from riverbeam.stream import RequestPublisher, StreamConfig
from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamAck, StreamChunk
from tests.support.gated_jetstream import GatedJetStream, let_run

GUARD_S = 5  # a hang guard, not a timing assertion


class TakenOver(InMemoryStore):
    """Another runner took the run over: this one's finish step is refused (no terminal frame)."""

    async def finish_run(self, **kwargs: Any) -> Any:
        raise RiverbeamError(ErrorCode.STORE_CONFLICT, "the run has another holder")


class GatedSinks:
    """Every streaming request publishes to one JetStream that never acknowledges."""

    def __init__(self, *, attempts: int = 4) -> None:
        self.js = GatedJetStream()
        self.attempts = attempts
        self.opened: list[RequestPublisher] = []

    @property
    def stream(self) -> StreamConfig:
        return StreamConfig()

    async def open(self, request_id: str, *, stream: bool) -> FrameSink:
        sink = RequestPublisher(self.js, request_id, attempts=self.attempts)  # type: ignore[arg-type]
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
        for n in (1, 2):
            await sinks.js.wait_sent(n)
            sinks.js.ack()
        # The finish step is refused (taken over): no terminal frame from this runner.
        await beam.wait_idle()

    [sink] = sinks.opened
    assert [t for t in asyncio.all_tasks() if t.get_name().startswith("frames ")] == []
    assert (sink.last_seq, sink.pending, len(sinks.js.sent)) == (2, 0, 2)
    assert not sink.finished


class FinishWatch(InMemoryStore):
    """Notes, at each finish step, how many frames were stored and in flight."""

    def __init__(self, js: GatedJetStream) -> None:
        super().__init__()
        self.js = js
        self.at_finish: list[tuple[int, int]] = []

    async def finish_run(self, **kwargs: Any) -> Any:
        self.at_finish.append((len(self.js.stored), self.js.in_flight))
        return await super().finish_run(**kwargs)


def _answering(name: str) -> FramesAgent:
    done = StreamChunk(type="done", result=AgentResult(agent_name=name))
    return FramesAgent(name, [_chunk("a"), done])


async def test_the_finish_step_waits_until_the_frames_before_the_terminal_are_stored() -> None:
    sinks = GatedSinks()
    store = FinishWatch(sinks.js)
    beam = RiverBeam(store=store, sinks=sinks)
    beam.register_agent(_answering("answer"))

    async with asyncio.timeout(GUARD_S):
        ack = await beam.invoke(text_request("answer", "hi", stream=True))
        assert isinstance(ack, StreamAck)
        await sinks.js.wait_sent(1)
        await let_run()
        # The agent is done, but its chunk is not acknowledged: the run is not recorded yet.
        assert store.at_finish == []
        sinks.js.ack()
        await sinks.js.wait_sent(2)  # the done frame, once the finish step committed
        sinks.js.ack()
        await beam.wait_idle()

    assert store.at_finish == [(1, 0)]
    assert [json.loads(s.payload)["type"] for s in sinks.js.stored] == ["chunk", "done"]
    assert (await store.get_run(run_id=ack.run_id or "")).status == "completed"


async def test_a_frame_that_was_not_stored_fails_the_run_as_before() -> None:
    sinks = GatedSinks(attempts=1)
    store = FinishWatch(sinks.js)
    beam = RiverBeam(store=store, sinks=sinks)
    beam.register_agent(_answering("answer"))

    async with asyncio.timeout(GUARD_S):
        ack = await beam.invoke(text_request("answer", "hi", stream=True))
        assert isinstance(ack, StreamAck)
        await sinks.js.wait_sent(1)
        sinks.js.refuse(nats.errors.TimeoutError())
        await sinks.js.wait_sent(2)  # the error frame ends the stream
        sinks.js.ack()
        await beam.wait_idle()

    run = await store.get_run(run_id=ack.run_id or "")
    assert (run.status, run.error_code) == ("failed", "BEM-110")
    rid = ack.request_id
    assert [s.msg_id for s in sinks.js.sent] == [f"{rid}:1", f"{rid}:2"]
    assert json.loads(sinks.js.sent[-1].payload)["type"] == "error"


async def test_a_non_streaming_sink_numbers_frames_and_keeps_none() -> None:
    sink = CountingSink()
    for text in ("a", "b", "c"):
        await sink.publish(StreamChunk(type="chunk", error=text))
    assert sink.last_seq == 3  # what a checkpoint of a non-streaming run records
    assert not hasattr(sink, "frames")
