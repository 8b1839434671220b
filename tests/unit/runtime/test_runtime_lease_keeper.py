"""The lease keeper renews a held run's lease every third of its ttl, at the run's epoch, and
stops the run once the lease is lost; stopped, it renews nothing more."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import PipelineOptions, RiverBeam
from riverbeam.runtime._lease_keeper import LeaseKeeper
from riverbeam.runtime._live import LiveRun
from riverbeam.store import InMemoryStore
from riverbeam.types import AgentMessage, StreamAck, StreamChunk
from tests.unit.runtime.runtime_kit import FramesAgent, text_request


class Renewals:
    """A store whose renew_lease answers from a script (True, False or an error)."""

    def __init__(self, *answers: bool | RiverbeamError) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    async def renew_lease(self, **step: Any) -> bool:
        self.calls.append(step)
        answer = self.answers.pop(0) if self.answers else True
        if isinstance(answer, RiverbeamError):
            raise answer
        return answer


async def _until(condition: Callable[[], bool]) -> None:
    """Wait for `condition` (a deadline only against a hang, not a timing threshold)."""
    async with asyncio.timeout(10):
        while not condition():  # noqa: ASYNC110 - polling the keeper's state
            await asyncio.sleep(0.005)


def _keeper(store: Renewals, live: LiveRun, ttl_s: float = 0.06) -> LeaseKeeper:
    return LeaseKeeper(
        store,  # type: ignore[arg-type]
        run_id="r-1",
        owner="w",
        ttl_s=ttl_s,
        epoch=3,
        live=live,
    )


async def test_it_renews_every_third_of_the_ttl_at_the_runs_epoch() -> None:
    store = Renewals()
    keeper = _keeper(store, LiveRun())
    assert keeper.running and store.calls == []  # nothing before the first third
    await _until(lambda: len(store.calls) >= 2)
    assert store.calls[0] == {"run_id": "r-1", "lease_owner": "w", "ttl_s": 0.06, "lease_epoch": 3}
    keeper.stop()
    assert not keeper.running
    done = len(store.calls)
    await asyncio.sleep(0.06)
    assert len(store.calls) == done


async def test_a_failed_renewal_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    store = Renewals(RiverbeamError(ErrorCode.STORE_UNAVAILABLE, "down"))
    live = LiveRun()
    keeper = _keeper(store, live)
    with caplog.at_level(logging.WARNING, logger="riverbeam.pipeline"):
        await _until(lambda: len(store.calls) >= 2)
    assert keeper.running and not live.cancel_requested
    assert "lease renewal failed for run r-1" in caplog.text
    keeper.stop()


async def test_a_lost_lease_stops_the_run_and_the_keeper() -> None:
    live = LiveRun()
    live.task = asyncio.ensure_future(asyncio.Event().wait())
    store = Renewals(False)
    keeper = _keeper(store, live)
    await _until(lambda: not keeper.running)
    assert len(store.calls) == 1
    assert live.cancel_requested and live.cancel_reason == "lease lost"
    with pytest.raises(asyncio.CancelledError):
        await live.task


async def test_a_lease_lost_after_the_run_ended_cancels_nothing() -> None:
    live = LiveRun()
    live.task = asyncio.ensure_future(asyncio.sleep(0))
    await live.task
    store = Renewals(False)
    keeper = _keeper(store, live)
    await _until(lambda: not keeper.running)
    assert len(store.calls) == 1 and not live.cancel_requested


async def test_a_renewal_under_way_when_stopped_is_cancelled() -> None:
    class Slow(Renewals):
        async def renew_lease(self, **step: Any) -> bool:
            self.calls.append(step)
            await asyncio.Event().wait()
            return True

    store = Slow()
    keeper = _keeper(store, LiveRun(), ttl_s=0.03)
    await _until(lambda: len(store.calls) == 1)
    await asyncio.sleep(0)
    assert keeper.running
    keeper.stop()
    await asyncio.sleep(0.03)
    assert not keeper.running and len(store.calls) == 1


async def test_a_long_run_keeps_its_lease_and_lets_it_go_at_its_end() -> None:
    store = InMemoryStore()
    renewed: list[int | None] = []
    renew = store.renew_lease

    async def counting(**step: Any) -> bool:
        renewed.append(step["lease_epoch"])
        return await renew(**step)

    store.renew_lease = counting  # type: ignore[method-assign]
    beam = RiverBeam(store=store, options=PipelineOptions(runner_id="w", lease_ttl_s=0.15))
    beam.register_agent(
        FramesAgent("hold", [StreamChunk(type="thinking", data=AgentMessage(role="ai"))], hang=True)
    )
    ack = await beam.invoke(text_request("hold", "work", stream=True))
    assert isinstance(ack, StreamAck)
    await _until(lambda: len(renewed) >= 2)
    assert set(renewed) == {1}
    [live] = beam.pipeline._live.values()
    keeper = live.lease
    assert keeper is not None and keeper.running
    await beam.cancel(ack.request_id)
    await beam.wait_idle()
    assert not keeper.running
    assert live.lease is None  # let go: the keeper and the run refer to each other no more
    run = await store.get_run(run_id=ack.run_id or "")
    assert run.status == "cancelled"
    done = len(renewed)
    await asyncio.sleep(0.1)
    assert len(renewed) == done
