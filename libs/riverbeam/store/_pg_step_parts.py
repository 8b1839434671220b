"""Parts of the Postgres pipeline steps, run on a connection inside the step's transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import asyncpg

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import _checks, _rows
from riverbeam.store._sql import Statements
from riverbeam.types import Run

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[asyncpg.Record]

__all__ = [
    "check_fence",
    "why_not_finished",
    "why_not_resolved",
]


async def why_not_resolved(
    conn: Connection, sql: Statements, action_id: str, interaction_id: str
) -> NoReturn:
    """Why an action's compare-and-set took no row: BEM-027, 064 or 066."""
    row = await conn.fetchrow(sql.action_state, action_id)
    if row is None:
        raise RiverbeamError(ErrorCode.ACTION_NOT_FOUND, action_id=action_id)
    if row["interaction_id"] != interaction_id:
        raise RiverbeamError(
            ErrorCode.ACTION_WRONG_INTERACTION,
            action_id=action_id,
            interaction_id=interaction_id,
        )
    if row["status"] == "expired" or (row["status"] == "pending" and row["expired"]):
        raise RiverbeamError(ErrorCode.ACTION_EXPIRED, action_id=action_id)
    raise RiverbeamError(ErrorCode.ACTION_NOT_PENDING, action_id=action_id, status=row["status"])


async def check_fence(
    conn: Connection, sql: Statements, run_id: str, epoch: int, *, running: bool
) -> None:
    """The run is at `epoch` (and, with `running`, still running), under a share lock held
    until the step commits: BEM-028 for an unknown run, BEM-035 otherwise."""
    row = await conn.fetchrow(sql.run_fence, run_id)
    if row is None:
        raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
    current = int(row["lease_epoch"])
    if current != epoch or (running and row["status"] != "running"):
        raise _checks.stale_epoch(run_id, epoch, current)


async def why_not_finished(
    conn: Connection, sql: Statements, run_id: str, lease_owner: str, epoch: int | None
) -> Run:
    """After the finish compare-and-set took no row: the stored run when this owner already
    finished it at this epoch (a retry); BEM-028, BEM-035 or BEM-121 otherwise."""
    row = await conn.fetchrow(sql.get_run, run_id)
    if row is None:
        raise RiverbeamError(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
    current = int(row["lease_epoch"])
    if epoch is not None:
        if current != epoch:
            raise _checks.stale_epoch(run_id, epoch, current)
        if row["status"] != "running" and row["lease_owner"] == lease_owner:
            return _rows.run_of(row)
    raise RiverbeamError(
        ErrorCode.STORE_CONFLICT,
        "the run is no longer running under this lease",
        run_id=run_id,
        status=row["status"],
    )
