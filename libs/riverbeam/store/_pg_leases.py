"""Run leases on PostgreSQL: renew one, reap expired runs, take expired runs over; and
the sweep that marks expired approvals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from riverbeam.store import _checks, _rows
from riverbeam.store._nul import nul_safe
from riverbeam.store._pg_access import PgAccess
from riverbeam.store._pg_children import settle_orphans
from riverbeam.store._pg_ledger import settle_in_flight
from riverbeam.store._steps import LOST_RUN_CODE, LOST_RUN_MESSAGE
from riverbeam.store._types import TakenOverRun
from riverbeam.types import Action, Run

__all__ = ["PgLeases"]


class PgLeases:
    """The lease methods of PgBeamStore (a mixin; `self` is the store)."""

    @nul_safe
    async def renew_lease(
        self: PgAccess,
        *,
        run_id: str,
        lease_owner: str,
        ttl_s: float,
        lease_epoch: int | None = None,
    ) -> bool:
        ttl = _checks.lease_ttl(ttl_s)
        epoch = _checks.lease_epoch(lease_epoch)
        async with self._connection() as conn:
            status = await conn.execute(self._sql.renew_lease, run_id, lease_owner, ttl, epoch)
        return status == "UPDATE 1"

    async def expire_pending_actions(
        self: PgAccess, *, now: datetime | None = None, limit: int = 100
    ) -> list[Action]:
        size = _checks.positive_limit(limit, _checks.DEFAULT_REAP_LIMIT)
        async with self._connection() as conn:  # one statement: its own transaction
            rows = await conn.fetch(self._sql.expire_actions, _checks.aware(now), size)
        return sorted((_rows.action_of(r) for r in rows), key=lambda a: a.created_at)

    async def reap_expired_runs(
        self: PgAccess, *, now: datetime | None = None, limit: int = 100
    ) -> list[Run]:
        size = _checks.positive_limit(limit, _checks.DEFAULT_REAP_LIMIT)
        now = _checks.aware(now)
        async with self._connection() as conn, conn.transaction():
            rows = await conn.fetch(self._sql.reap, now, size, LOST_RUN_CODE, LOST_RUN_MESSAGE)
            # The ledger: what the dead runner had in flight is settled with the takeover.
            await settle_in_flight(conn, self._schema, [r["run_id"] for r in rows])
            await settle_orphans(conn, self._schema, [r["run_id"] for r in rows])
        return [_rows.run_of(r) for r in rows]

    async def take_over_expired_runs(
        self: PgAccess,
        *,
        new_owner: str,
        lease_ttl_s: float,
        now: datetime | None = None,
        limit: int = 100,
        exclude_run_ids: Sequence[str] = (),
    ) -> list[TakenOverRun]:
        ttl = _checks.lease_ttl(lease_ttl_s)
        size = _checks.positive_limit(limit, _checks.DEFAULT_REAP_LIMIT)
        now = _checks.aware(now)
        async with self._connection() as conn, conn.transaction():
            rows = await conn.fetch(
                self._sql.take_over, now, size, new_owner, ttl, list(exclude_run_ids)
            )
            await settle_in_flight(conn, self._schema, [r["run_id"] for r in rows])
            await settle_orphans(conn, self._schema, [r["run_id"] for r in rows])
        return [TakenOverRun(_rows.run_of(r), r["previous_owner"]) for r in rows]
