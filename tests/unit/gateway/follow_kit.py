"""Fakes of the Gateway's follow tests: scripted frames, a counting store, frame builders."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import InMemoryStore
from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamChunk


class ScriptedFrames:
    """Yields the stored frames after the cursor, then fails as told (timeout or not found)."""

    def __init__(self, frames: list[StreamChunk], then: ErrorCode) -> None:
        self.frames = frames
        self.then = then
        self.calls: list[dict[str, Any]] = []

    async def follow(
        self,
        request_id: str,
        *,
        after_seq: int = 0,
        idle_timeout_s: float | None = None,
        wait_for_start_s: float | None = None,
    ) -> AsyncIterator[StreamChunk]:
        self.calls.append(
            {"after_seq": after_seq, "idle": idle_timeout_s, "start": wait_for_start_s}
        )
        for frame in self.frames:
            if (frame.seq or 0) > after_seq:
                yield frame
        raise RiverbeamError(self.then)

    async def last_frame(self, request_id: str) -> StreamChunk | None:
        return self.frames[-1] if self.frames else None


def chunk(seq: int) -> StreamChunk:
    data = AgentMessage(role="ai", content=[ContentPart.of_text(f"part {seq}")])
    return StreamChunk(type="chunk", data=data, seq=seq)


def done(seq: int) -> StreamChunk:
    result = AgentResult(agent_name="assistant", content=[ContentPart.of_text("bye")])
    return StreamChunk(type="done", result=result, seq=seq)


class CountingStore:
    """An InMemoryStore whose reads are counted, and that reads a run with its session at once
    (as StoreClient does in one FetchRunByRequest call)."""

    def __init__(self, inner: InMemoryStore) -> None:
        self.inner = inner
        self.reads: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.reads.append(name)
        return getattr(self.inner, name)

    async def get_run_with_session(self, *, request_id: str) -> tuple[Any, Any]:
        self.reads.append("get_run_with_session")
        run = await self.inner.get_run_by_request(request_id=request_id)
        if run is None:
            return None, None
        return run, await self.inner.get_session(session_id=run.session_id)


class SubscribingFrames(ScriptedFrames):
    """ScriptedFrames that subscribe first (as JetStreamFrames does), counting subscriptions."""

    def __init__(self, frames: list[StreamChunk], then: ErrorCode) -> None:
        super().__init__(frames, then)
        self.subscribed = 0
        self.closed = 0

    async def subscribe(self, request_id: str) -> Subscribed:
        self.subscribed += 1
        return Subscribed(self, request_id)


class Subscribed:
    def __init__(self, frames: SubscribingFrames, request_id: str) -> None:
        self.owner = frames
        self.request_id = request_id

    def frames(
        self, *, after_seq: int, idle_timeout_s: float | None, wait_for_start_s: float | None
    ) -> AsyncIterator[StreamChunk]:
        self.owner.calls.append({"subscribed": True})
        return self.owner.follow(
            self.request_id,
            after_seq=after_seq,
            idle_timeout_s=idle_timeout_s,
            wait_for_start_s=wait_for_start_s,
        )

    async def aclose(self) -> None:
        self.owner.closed += 1
