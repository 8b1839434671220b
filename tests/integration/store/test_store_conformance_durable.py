"""Durable runs in every BeamStore (issue 13): the busy run named, version pinning, expiring
approvals.

Runs against memory, Postgres and the gRPC store service (the `store` fixture).
"""

from __future__ import annotations

from store_kit import begin, expect

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore


async def test_a_busy_session_names_its_running_run(store: BeamStore) -> None:
    """What a busy-session `interrupt` cancels: BEM-030 carries the running run's ids."""
    first = await begin(store, exclusive=True)
    with expect(ErrorCode.SESSION_BUSY) as info:
        await begin(store, session_id=first.session.session_id, exclusive=True)
    assert info.value.details["run_id"] == first.run.run_id
    assert info.value.details["request_id"] == first.run.request_id
