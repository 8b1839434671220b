"""The pipeline's failure paths: a store that is down at the finish step, a caller that goes
away during the begin step, and the reaper's order (fence, record, then the terminal frame)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from runtime_kit import FramesAgent, text_request

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import PipelineOptions, RiverBeam, reap_once
from riverbeam.store import InMemoryStore
from riverbeam.types import AgentMessage, AgentResult, ContentPart, StreamAck, StreamChunk


class FlakyFinish(InMemoryStore):
    """finish_run fails with BEM-120 `failures` times; with `commit_first` the first failure
    comes after the step committed (the answer is lost, not the write)."""

    def __init__(self, failures: int, *, commit_first: bool = False) -> None:
        super().__init__()
        self.failures = failures
        self.commit_first = commit_first
        self.attempts = 0

    async def finish_run(self, **kwargs: Any) -> Any:
        self.attempts += 1
        if self.attempts <= self.failures:
            if self.commit_first and self.attempts == 1:
                await super().finish_run(**kwargs)
            raise RiverbeamError(ErrorCode.STORE_UNAVAILABLE, "store service UNAVAILABLE")
        return await super().finish_run(**kwargs)


def _answering(name: str) -> FramesAgent:
    chunk = StreamChunk(
        type="chunk", data=AgentMessage(role="ai", content=[ContentPart.of_text("the reply")])
    )
    result = AgentResult(agent_name=name, content=[ContentPart.of_text("the reply")])
    done = StreamChunk(type="done", result=result)
    return FramesAgent(name, [chunk, done])


@pytest.mark.parametrize("commit_first", [False, True])
async def test_a_finish_step_is_retried_while_the_store_is_down(commit_first: bool) -> None:
    store = FlakyFinish(3, commit_first=commit_first)
    beam = RiverBeam(store=store)
    beam.register_agent(_answering("answer"))
    ack = await beam.invoke(text_request("answer", "hi", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    assert store.attempts == 4
    run = await store.get_run(run_id=ack.run_id or "")
    assert run.status == "completed"
    messages = await beam.list_messages(ack.session_id)
    # The reply is recorded once, even when the first attempt committed.
    assert [m.role for m in messages] == ["human", "ai"]
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert [f.type for f in frames] == ["chunk", "done"]


async def test_a_unary_caller_gets_the_result_after_a_store_outage() -> None:
    store = FlakyFinish(2)
    beam = RiverBeam(store=store)
    beam.register_agent(_answering("answer"))
    result = await beam.invoke(text_request("answer", "hi"))
    assert isinstance(result, AgentResult)
    assert (await store.get_run(run_id=result.run_id or "")).status == "completed"


async def test_a_finish_step_that_never_lands_publishes_no_terminal_frame() -> None:
    store = FlakyFinish(10_000)
    beam = RiverBeam(store=store, options=PipelineOptions(finish_retry_s=0.3, lease_ttl_s=0.3))
    beam.register_agent(_answering("answer"))
    ack = await beam.invoke(text_request("answer", "hi", stream=True))
    assert isinstance(ack, StreamAck)
    await beam.wait_idle()
    # Not recorded, so the runner does not end the stream: the reaper will, once.
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert [f.type for f in frames] == ["chunk"]
    await asyncio.sleep(0.4)
    store.failures = 0  # the store is back
    assert await reap_once(store, beam.sinks) == 1
    frames = beam.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert [(f.type, f.error_code) for f in frames] == [("chunk", None), ("error", "BEM-034")]


class SlowBegin(InMemoryStore):
    """begin_run commits, then takes a while to answer (as a store service whose reply is
    still on the wire when the caller's deadline passes)."""

    def __init__(self) -> None:
        super().__init__()
        self.committed = asyncio.Event()

    async def begin_run(self, **kwargs: Any) -> Any:
        begun = await super().begin_run(**kwargs)
        self.committed.set()
        await asyncio.sleep(0.2)
        return begun


@pytest.mark.parametrize("stream", [False, True])
async def test_a_caller_gone_during_the_begin_step_leaves_a_cancelled_run(stream: bool) -> None:
    store = SlowBegin()
    beam = RiverBeam(store=store)
    beam.register_agent(_answering("answer"))
    request = text_request("answer", "hi", stream=stream, request_id=None)
    call = asyncio.ensure_future(beam.invoke(request))
    await store.committed.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    [run] = [r for r in store._t.runs.values()]
    assert (run.status, run.error_code) == ("cancelled", "BEM-033")
    assert beam.pipeline.held_run_ids == []
    # The session is free at once (no BEM-030 until a reaper comes by).
    again = await beam.invoke(text_request("answer", "again", run.session_id))
    assert isinstance(again, AgentResult)


class Revoker:
    def __init__(self, store: InMemoryStore, *, fail: bool = False) -> None:
        self.store = store
        self.fail = fail
        self.calls: list[tuple[str, int, str]] = []

    async def revoke(self, run_id: str, min_epoch: int) -> int:
        status = (await self.store.get_run(run_id=run_id)).status
        self.calls.append((run_id, min_epoch, status))
        if self.fail:
            raise RiverbeamError(ErrorCode.SERVICE_UNAVAILABLE, "sandbox down")
        return min_epoch


async def _lost_run(store: InMemoryStore) -> tuple[RiverBeam, StreamAck]:
    hold = FramesAgent(
        "hold", [StreamChunk(type="thinking", data=AgentMessage(role="ai"))], hang=True
    )
    dying = RiverBeam(store=store, options=PipelineOptions(runner_id="dying", lease_ttl_s=0.2))
    dying.register_agent(hold)
    ack = await dying.invoke(text_request("hold", "work", stream=True))
    assert isinstance(ack, StreamAck)
    await asyncio.sleep(0.05)
    # As if the process stalled: no more renewals.
    keepers = [live.lease for live in dying.pipeline._live.values() if live.lease is not None]
    assert len(keepers) == 1 and keepers[0].running
    keepers[0].stop()
    await asyncio.sleep(0.3)
    return dying, ack


async def test_the_reaper_fences_the_sandbox_before_it_records_the_failure() -> None:
    store = InMemoryStore()
    dying, ack = await _lost_run(store)
    fences = Revoker(store)
    assert await reap_once(store, dying.sinks, owner="reaper", fences=fences) == 1
    # Revoked while the record still said running (at the new epoch 2).
    assert fences.calls == [(ack.run_id, 2, "running")]
    run = await store.get_run(run_id=ack.run_id or "")
    assert (run.status, run.error_code, run.lease_epoch) == ("failed", "BEM-034", 2)
    # The stalled runner wakes up: its finish is refused, it publishes no second terminal frame.
    await dying.cancel(ack.request_id)
    await dying.wait_idle()
    frames = dying.sinks.frames(ack.request_id)  # type: ignore[attr-defined]
    assert [f.is_terminal for f in frames].count(True) == 1
    assert frames[-1].error_code == "BEM-034"


async def test_a_run_whose_fence_cannot_be_revoked_is_not_failed_yet() -> None:
    store = InMemoryStore()
    dying, ack = await _lost_run(store)
    fences = Revoker(store, fail=True)
    assert await reap_once(store, dying.sinks, owner="reaper", fences=fences, lease_ttl_s=0.1) == 0
    run = await store.get_run(run_id=ack.run_id or "")
    assert (run.status, run.lease_owner, run.lease_epoch) == ("running", "reaper", 2)
    assert not any(f.is_terminal for f in dying.sinks.frames(ack.request_id))  # type: ignore[attr-defined]
    # A later pass (the sandbox is back) takes it over again and ends it.
    fences.fail = False
    await asyncio.sleep(0.2)
    assert await reap_once(store, dying.sinks, owner="reaper", fences=fences) == 1
    assert (await store.get_run(run_id=ack.run_id or "")).lease_epoch == 3
    await dying.cancel(ack.request_id)
    await dying.wait_idle()


async def test_the_reaper_leaves_runs_this_process_still_holds() -> None:
    store = InMemoryStore()
    dying, ack = await _lost_run(store)
    held = dying.pipeline.held_run_ids
    assert held == [ack.run_id]
    assert await reap_once(store, dying.sinks, exclude=lambda: held) == 0
    await dying.cancel(ack.request_id)
    await dying.wait_idle()
