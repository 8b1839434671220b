"""FollowStream ends even when the stream cannot: from the run record, or at once."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from riverbeam.auth import DevAuthenticator
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway import Gateway
from riverbeam.routing import ModelList
from riverbeam.store import InMemoryStore
from riverbeam.types import AgentResult, ContentPart, StreamChunk
from tests.unit.gateway.follow_kit import (
    CountingStore,
    ScriptedFrames,
    Subscribed,
    SubscribingFrames,
    chunk,
    done,
)


class NoRunner:
    async def list_agents(self) -> list[Any]:
        return []


async def finished_run(store: InMemoryStore, *, user: str, status: str) -> tuple[str, str]:
    request_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())
    await store.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="assistant",
        run_id=run_id,
        lease_owner="r1",
        lease_ttl_s=30,
        user_id=user,
        request_id=request_id,
        human_content=[ContentPart.of_text("hi")],
    )
    result = AgentResult(agent_name="assistant", content=[ContentPart.of_text("bye")])
    await store.finish_run(
        run_id=run_id,
        lease_owner="r1",
        status=status,  # type: ignore[arg-type]
        result=result if status == "completed" else None,
        error_code=None if status == "completed" else "BEM-087",
        error_message=None if status == "completed" else "agent reported an error",
    )
    return request_id, run_id


def gateway(store: InMemoryStore, frames: ScriptedFrames) -> tuple[Gateway, Any]:
    auth = DevAuthenticator()
    gw = Gateway(
        authenticator=auth,
        runner=NoRunner(),  # type: ignore[arg-type]
        store=store,
        models=ModelList.default(),
        frames=frames,
    )
    return gw, auth.principal


@pytest.mark.parametrize("status", ["completed", "failed"])
async def test_a_lost_terminal_frame_is_rebuilt_from_the_run(status: str) -> None:
    store = InMemoryStore()
    frames = ScriptedFrames([chunk(1), chunk(2)], then=ErrorCode.STREAM_TIMEOUT)
    gw, principal = gateway(store, frames)
    request_id, run_id = await finished_run(store, user=principal.subject, status=status)

    got = [f async for f in gw.follow(principal, request_id, after_seq=0)]

    assert [f.seq for f in got] == [1, 2, 3]
    last = got[-1]
    assert last.run_id == run_id and last.request_id == request_id
    if status == "completed":
        assert last.type == "done" and last.result is not None and last.result.text == "bye"
    else:
        assert last.type == "error" and last.error_code == "BEM-087"


async def test_a_finished_request_that_never_streamed_is_refused_at_once() -> None:
    store = InMemoryStore()
    frames = ScriptedFrames([], then=ErrorCode.STREAM_NOT_FOUND)
    gw, principal = gateway(store, frames)
    request_id, _ = await finished_run(store, user=principal.subject, status="completed")

    with pytest.raises(RiverbeamError) as info:
        [f async for f in gw.follow(principal, request_id, after_seq=0)]
    assert info.value.code is ErrorCode.STREAM_NOT_FOUND
    (call,) = frames.calls
    assert call["start"] is not None and call["start"] <= 1.0  # not the 30 s default


@pytest.mark.parametrize("after_seq", [2, 3, 50, 2147483647])
async def test_a_cursor_at_or_past_the_stored_end_gets_no_frames(after_seq: int) -> None:
    """The real frames (none) and the real end: no done frame is invented with a new seq."""
    store = InMemoryStore()
    frames = ScriptedFrames([chunk(1), done(2)], then=ErrorCode.STREAM_TIMEOUT)
    gw, principal = gateway(store, frames)
    request_id, _ = await finished_run(store, user=principal.subject, status="completed")

    assert [f async for f in gw.follow(principal, request_id, after_seq=after_seq)] == []


async def test_a_lost_terminal_frame_is_rebuilt_after_the_last_stored_one_only() -> None:
    store = InMemoryStore()
    frames = ScriptedFrames([chunk(1), chunk(2)], then=ErrorCode.STREAM_TIMEOUT)
    gw, principal = gateway(store, frames)
    request_id, _ = await finished_run(store, user=principal.subject, status="completed")

    (rebuilt,) = [f async for f in gw.follow(principal, request_id, after_seq=2)]
    assert (rebuilt.type, rebuilt.seq) == ("done", 3)
    assert [f async for f in gw.follow(principal, request_id, after_seq=3)] == []
    assert [f async for f in gw.follow(principal, request_id, after_seq=2147483647)] == []


def counting_gateway(frames: ScriptedFrames) -> tuple[Gateway, Any, CountingStore]:
    store = CountingStore(InMemoryStore())
    gw, principal = gateway(store, frames)  # type: ignore[arg-type]
    return gw, principal, store


async def test_a_follow_reads_the_store_once_and_subscribes_once() -> None:
    frames = SubscribingFrames([chunk(1), done(2)], then=ErrorCode.STREAM_TIMEOUT)
    gw, principal, store = counting_gateway(frames)
    request_id, _ = await finished_run(store.inner, user=principal.subject, status="completed")

    got = [f async for f in gw.follow(principal, request_id, after_seq=0)]

    assert [f.seq for f in got] == [1, 2]
    assert store.reads == ["get_run_with_session"]  # the run and its session, one call
    assert frames.subscribed == 1
    # The frames came from that subscription (with a finished run's short waits), not a second.
    assert frames.calls[0] == {"subscribed": True}
    assert frames.calls[1]["start"] is not None and frames.calls[1]["start"] <= 1.0
    assert len(frames.calls) == 2


async def test_a_refused_follow_yields_nothing_and_drops_its_subscription() -> None:
    frames = SubscribingFrames([chunk(1), done(2)], then=ErrorCode.STREAM_TIMEOUT)
    gw, principal, store = counting_gateway(frames)
    request_id, _ = await finished_run(store.inner, user="someone-else", status="completed")

    got: list[StreamChunk] = []
    with pytest.raises(RiverbeamError) as info:
        got.extend([f async for f in gw.follow(principal, request_id, after_seq=0)])
    assert info.value.code is ErrorCode.REQUEST_NOT_FOUND and got == []
    # The subscription made beside the store read is removed again.
    assert (frames.subscribed, frames.closed) == (1, 1)
    assert frames.calls == []  # no frame was read

    with pytest.raises(RiverbeamError) as info:
        [f async for f in gw.follow(principal, str(uuid.uuid4()), after_seq=0)]
    assert info.value.code is ErrorCode.REQUEST_NOT_FOUND
    assert (frames.subscribed, frames.closed) == (2, 2)
    assert frames.calls == []


async def test_a_follow_removes_its_subscription_when_it_ends_or_is_left() -> None:
    frames = SubscribingFrames([chunk(1), chunk(2), done(3)], then=ErrorCode.STREAM_TIMEOUT)
    gw, principal, store = counting_gateway(frames)
    request_id, _ = await finished_run(store.inner, user=principal.subject, status="completed")

    assert len([f async for f in gw.follow(principal, request_id, after_seq=0)]) == 3
    assert (frames.subscribed, frames.closed) == (1, 1)

    left = gw.follow(principal, request_id, after_seq=0)
    assert (await anext(left)).seq == 1
    await left.aclose()  # the caller hangs up after one frame
    assert (frames.subscribed, frames.closed) == (2, 2)


class SendingStore(CountingStore):
    """A CountingStore whose read is sent from a task of its own, as a grpc.aio call is."""

    def __init__(self, inner: InMemoryStore, order: list[str]) -> None:
        super().__init__(inner)
        self.order = order

    async def get_run_with_session(self, *, request_id: str) -> tuple[Any, Any]:
        async def send() -> None:
            self.order.append("store read sent")

        await asyncio.ensure_future(send())
        return await super().get_run_with_session(request_id=request_id)


class OrderedFrames(SubscribingFrames):
    def __init__(self, frames: list[StreamChunk], order: list[str]) -> None:
        super().__init__(frames, then=ErrorCode.STREAM_TIMEOUT)
        self.order = order

    async def subscribe(self, request_id: str) -> Subscribed:
        self.order.append("consumer asked for")
        return await super().subscribe(request_id)


async def test_the_store_read_goes_out_before_the_consumer_is_asked_for() -> None:
    """The read is the longer wait of the two; the consumer is made while it is under way."""
    order: list[str] = []
    frames = OrderedFrames([chunk(1), done(2)], order)
    store = SendingStore(InMemoryStore(), order)
    gw, principal = gateway(store, frames)  # type: ignore[arg-type]
    request_id, _ = await finished_run(store.inner, user=principal.subject, status="completed")

    got = [f.seq async for f in gw.follow(principal, request_id, after_seq=0)]

    assert got == [1, 2]
    assert order == ["store read sent", "consumer asked for"]
    assert (frames.subscribed, frames.closed) == (1, 1)
    assert store.reads == ["get_run_with_session"]
