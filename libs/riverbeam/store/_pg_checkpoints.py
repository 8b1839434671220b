"""Run checkpoints on PostgreSQL (a mixin of PgBeamStore): one row per run, fenced by epoch."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

from riverbeam.store import _checks
from riverbeam.store._checkpoints import RunCheckpoint, checkpoint_step, json_state, stale_step
from riverbeam.store._migrations import quote_schema
from riverbeam.store._nul import nul_safe
from riverbeam.store._pg_step_parts import check_fence
from riverbeam.store._sql import Statements

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = ["PgCheckpoints"]


class _PgSteps(Protocol):
    _sql: Statements
    _schema: str

    def _connection(self) -> AbstractAsyncContextManager[Connection]: ...

    def _transaction(self, step: str) -> AbstractAsyncContextManager[Connection]: ...


def _q(store: _PgSteps) -> str:
    return quote_schema(store._schema)


class PgCheckpoints:
    """The checkpoint methods of PgBeamStore (a mixin; `self` is the store)."""

    @nul_safe
    async def save_run_checkpoint(
        self: _PgSteps, *, run_id: str, lease_epoch: int, step: int, state: dict[str, Any]
    ) -> RunCheckpoint:
        checkpoint_step(step, state)
        epoch = _checks.lease_epoch(lease_epoch) or 1
        text = json_state(state)
        q = _q(self)
        async with self._transaction("save_run_checkpoint") as conn:
            # The run is running at this epoch, under a share lock until the commit: a
            # takeover (an UPDATE of the run row) waits for this step, or this step sees it.
            await check_fence(conn, self._sql, run_id, epoch, running=True)
            row = await conn.fetchrow(
                f"INSERT INTO {q}.run_checkpoints (run_id, lease_epoch, step, state)"
                " VALUES ($1, $2, $3, $4::jsonb)"
                " ON CONFLICT (run_id) DO UPDATE SET lease_epoch = EXCLUDED.lease_epoch,"
                " step = EXCLUDED.step, state = EXCLUDED.state, saved_at = now()"
                f" WHERE {q}.run_checkpoints.step <= EXCLUDED.step"
                " RETURNING saved_at",
                run_id,
                epoch,
                step,
                text,
            )
            if row is None:
                raise stale_step(run_id, step)
        return RunCheckpoint(run_id, epoch, step, json.loads(text), row["saved_at"])

    @nul_safe
    async def get_run_checkpoint(self: _PgSteps, *, run_id: str) -> RunCheckpoint | None:
        q = _q(self)
        async with self._connection() as conn:
            row = await conn.fetchrow(
                f"SELECT lease_epoch, step, state, saved_at FROM {q}.run_checkpoints"
                " WHERE run_id = $1",
                run_id,
            )
        if row is None:
            return None
        state = row["state"]
        loaded: dict[str, Any] = json.loads(state) if isinstance(state, str) else dict(state)
        return RunCheckpoint(
            run_id, int(row["lease_epoch"]), int(row["step"]), loaded, row["saved_at"]
        )
