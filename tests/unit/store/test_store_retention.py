"""Retention deletes idle sessions with everything under them, and keeps the rest."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from riverbeam.core.errors import RiverbeamError
from riverbeam.store import InMemoryStore, prune_idle_sessions, run_retention
from riverbeam.types import ContentPart


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def _session(store: InMemoryStore) -> str:
    session_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())
    await store.begin_run(
        session_id=session_id,
        agent_name="assistant",
        run_id=run_id,
        lease_owner="r",
        lease_ttl_s=5,
        human_content=[ContentPart.of_text("hi")],
    )
    await store.finish_run(run_id=run_id, lease_owner="r", status="completed")
    return session_id


async def test_prune_deletes_only_idle_sessions() -> None:
    clock = Clock()
    store = InMemoryStore(clock=clock)
    old = await _session(store)
    clock.now += timedelta(days=10)
    fresh = await _session(store)
    assert await prune_idle_sessions(store, idle=timedelta(days=7)) == 1
    with pytest.raises(RiverbeamError):
        await store.get_session(session_id=old)
    assert (await store.get_session(session_id=fresh)).session_id == fresh
    messages, _ = await store.list_messages(session_id=fresh)
    assert messages


async def test_retention_loop_runs_until_cancelled() -> None:
    clock = Clock()
    store = InMemoryStore(clock=clock)
    old = await _session(store)
    clock.now += timedelta(days=2)
    task = asyncio.create_task(run_retention(store, idle=timedelta(days=1), interval_s=0.01))
    for _ in range(200):
        try:
            await store.get_session(session_id=old)
        except RiverbeamError:
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the retention loop never deleted the idle session")
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
