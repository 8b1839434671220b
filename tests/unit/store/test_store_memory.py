"""InMemoryStore details the conformance suite cannot reach: an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from riverbeam.store import InMemoryStore

T0 = datetime(2030, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


async def test_leases_and_retention_follow_the_clock() -> None:
    clock = Clock()
    store = InMemoryStore(clock=clock)
    begun = await store.begin_run(
        session_id="s1", agent_name="a", run_id="r1", lease_owner="w", lease_ttl_s=30
    )
    assert begun.run.lease_expires_at == T0 + timedelta(seconds=30)
    assert await store.reap_expired_runs() == []
    clock.now = T0 + timedelta(hours=1, seconds=31)
    assert await store.delete_idle_sessions(older_than=timedelta(hours=1)) == 1  # lease expired
    clock.now = T0
    again = await store.begin_run(
        session_id="s2", agent_name="a", run_id="r2", lease_owner="w", lease_ttl_s=30
    )
    clock.now = T0 + timedelta(seconds=31)
    (reaped,) = await store.reap_expired_runs()
    assert reaped.run_id == again.run.run_id and reaped.finished_at == clock.now
